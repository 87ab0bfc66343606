"""Configuration for Tortoise's migration CLI (`make migrations`); never used to serve.

The autodetector compares the models with the existing migration files only, so the
database it names is never touched.
"""

from hub.core.store.database import tortoise_config

TORTOISE_ORM = tortoise_config("sqlite://:memory:")
