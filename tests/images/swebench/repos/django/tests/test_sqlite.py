DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3"}}
SECRET_KEY = "rock-tests"
INSTALLED_APPS = []
USE_TZ = False
