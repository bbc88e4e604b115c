"""praib's version, at the ground floor: any layer may import it without importing the package's top
(whose lazy API names every layer), and setup.cfg reads it from here without importing anything."""

__version__ = "0.1.0"
