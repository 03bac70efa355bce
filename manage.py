#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentnava_site.settings")
    from django.core.management import execute_from_command_line

    from agentnava_site.raw_path import install_raw_target_dev_server

    # runserver passes the request target as sent, as gunicorn does (an endUserId may hold "/").
    install_raw_target_dev_server()

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
