"""Where records come from and go: OpenReview, PDF text, citation look-ups, sampling and Hub publishing."""
