"""The layer people and programs meet: REST views (api), the website chat (embed), the pages (web), one chat turn (chat) and what every JSON surface shares (http)."""
