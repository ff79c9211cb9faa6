"""REST client of the embedded host: finds it through <data>/host.json, authenticates as a user of
<data>/users.properties. Used by the `metron` CLI, the demo and the end-to-end tests."""
import base64
import json
import urllib.error
import urllib.request
from pathlib import Path


class HostError(RuntimeError):
    """The host refused a call (status and the host's error body) or cannot be reached."""

    def __init__(self, message, status=None, body=None):
        super().__init__(message)
        self.status = status
        self.body = body


class Host:
    def __init__(self, data_dir, user):
        data = Path(data_dir)
        try:
            self.rest = json.loads((data / "host.json").read_text())["rest"]
        except FileNotFoundError:
            raise HostError(f"no running host ({data / 'host.json'} missing); start one with metron-host") from None
        users = {}
        for line in (data / "users.properties").read_text().splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                name, value = line.split("=", 1)
                users[name.strip()] = value.strip().split(",")[0]
        if user not in users:
            raise HostError(f"no user '{user}' in {data / 'users.properties'}")
        self._password = users[user]
        self.auth = "Basic " + base64.b64encode(f"{user}:{users[user]}".encode()).decode()

    def call(self, method, path, body=None):
        req = urllib.request.Request(self.rest + path, method=method, data=body,
                                     headers={"Authorization": self.auth, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                text = r.read().decode()
                return json.loads(text) if text else {}
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            try:
                err = json.loads(text)
                msg = f"{err.get('error', e.code)}: {err.get('message', text)}"
            except ValueError:
                # not the host's own error body: a servlet container's HTML page is noise, its status line is not
                msg = e.reason if text.lstrip().startswith("<") else (text or e.reason)
            raise HostError(f"{method} {path} failed ({e.code}) {msg}", e.code, text) from None
        except urllib.error.URLError as e:
            raise HostError(f"host at {self.rest} unreachable: {e.reason}") from None

    def auth_password(self):
        """The password this client authenticates with (for handing to a browser in tests)."""
        return self._password
