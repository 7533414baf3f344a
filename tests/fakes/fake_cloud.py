"""Loopback stand-ins for Claude on Amazon Bedrock and Google Vertex AI, strict about what arrives.

They check what the real platforms check before answering: Bedrock the AWS SigV4 signature (recomputed
with botocore from the credentials the test gave the client, over the very bytes that arrived), the
path `/model/{id}/invoke-with-response-stream` and the body's `anthropic_version`; Vertex the OAuth bearer token
that its own `/token` endpoint issued for a service-account JWT it verified, and the path
`/v1/projects/{p}/locations/{r}/publishers/anthropic/models/{id}:streamRawPredict`. The body must then be
a valid Messages API request (`fake_anthropic.validate_request`, with the model taken from the path).

Bedrock answers in AWS event-stream frames (`application/vnd.amazon.eventstream`), each carrying one
Messages API event as base64 JSON, as the real service does; the SDK's own decoder reads them.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
import time
import urllib.parse
from typing import Any

from tests.fakes.fake_anthropic import FakeAnthropic, error_reply, message_events, validate_request
from tests.fakes.http import Reply

# The body names the API version (the platform's own, e.g. `bedrock-2023-05-31`, or a dated API version)
_VERSION = re.compile(r"^(?:bedrock-|vertex-)?\d{4}-\d{2}-\d{2}$")


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack("B", len(raw_name)) + raw_name + b"\x07" + struct.pack(">H", len(raw_value)) + raw_value


def event_frame(event: dict[str, Any]) -> bytes:
    """One AWS event-stream message holding `event` as Bedrock sends it: `{"bytes": base64(json)}`."""
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(event).encode()).decode()}).encode()
    headers = (_header(":event-type", "chunk") + _header(":content-type", "application/json")
               + _header(":message-type", "event"))
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    message = prelude + struct.pack(">I", binascii.crc32(prelude)) + headers + payload
    return message + struct.pack(">I", binascii.crc32(message))


def sse_to_frames(chunks: list[bytes]) -> list[bytes]:
    """The same events as `message_events` gives in SSE, framed for Bedrock."""
    frames = []
    for chunk in chunks:
        data = next(line[6:] for line in chunk.decode().splitlines() if line.startswith("data: "))
        frames.append(event_frame(json.loads(data)))
    return frames


class FakeBedrock(FakeAnthropic):
    """Bedrock's runtime endpoint for one region and one set of AWS credentials."""

    def __init__(self, replies: list[Any] | None = None, *, region: str = "us-east-1",
                 access_key: str = "AKIDFAKE", secret_key: str = "fake-secret", **kwargs: Any) -> None:
        super().__init__(replies, **kwargs)
        self.region, self.access_key, self.secret_key = region, access_key, secret_key
        self.models: list[str] = []

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        problem = self._signature_problem(path, headers, raw)
        if problem:
            self.violate(problem)
            return error_reply(403, "permission_error", problem)
        parts = path.split("?")[0].split("/")
        if len(parts) != 4 or parts[1] != "model" or parts[3] != "invoke-with-response-stream":
            return error_reply(404, "not_found_error", f"Not found: {path}")
        model = urllib.parse.unquote(parts[2])
        self.models.append(model)
        return self._answer(body, raw, model, framed=True)

    def _answer(self, body: Any, raw: bytes, model: str, *, framed: bool) -> Reply:
        if not isinstance(body, dict) or not _VERSION.match(str(body.get("anthropic_version", ""))):
            self.violate("anthropic_version is missing or malformed")
            return error_reply(400, "invalid_request_error", "anthropic_version: Field required")
        request = {k: v for k, v in body.items() if k not in ("anthropic_version", "stream")}
        errors = validate_request({**request, "model": model})
        if errors:
            for error in errors:
                self.violate(error)
            return error_reply(400, "invalid_request_error", errors[0])
        item = self.replies.pop(0) if self.replies else self.model(request) if self.model else None
        if item is None:
            self.violate("no scripted reply left for a request")
            return error_reply(500, "api_error", "fake has no scripted reply")
        if isinstance(item, Reply):
            return item
        chunks = message_events(item, usage=self._cache_usage(request, len(raw) // 4), model=model)
        if framed:
            return Reply(chunks=sse_to_frames(chunks), content_type="application/vnd.amazon.eventstream")
        return Reply(chunks=chunks)

    def _signature_problem(self, path: str, headers: dict[str, str], raw: bytes) -> str | None:
        """Recompute the SigV4 signature of what arrived with botocore; a mismatch is what AWS refuses."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        auth = headers.get("authorization", "")
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            return f"not SigV4-signed: {auth[:20]!r}"
        fields = dict(item.strip().split("=", 1) for item in auth[len("AWS4-HMAC-SHA256 "):].split(","))
        credential = fields.get("Credential", "").split("/")
        if credential[:1] != [self.access_key] or credential[2:4] != [self.region, "bedrock"]:
            return f"signed for the wrong key, region or service: {'/'.join(credential)}"
        signed = fields.get("SignedHeaders", "").split(";")
        request = AWSRequest(method="POST", url=f"{self.origin}{path}",
                             headers={name: headers[name] for name in signed if name in headers}, data=raw)
        request.context["timestamp"] = headers.get("x-amz-date", "")
        signer = SigV4Auth(Credentials(self.access_key, self.secret_key), "bedrock", self.region)
        canonical = signer.canonical_request(request)
        expected = signer.signature(signer.string_to_sign(request, canonical), request)
        if fields.get("Signature") != expected:
            return "SigV4 signature does not match the request that arrived"
        return None


class FakeVertex(FakeBedrock):
    """Vertex AI's endpoint plus the OAuth token endpoint a service-account key points at."""

    def __init__(self, replies: list[Any] | None = None, *, project: str = "proj-fake", region: str = "us-east5",
                 public_key_pem: bytes = b"", **kwargs: Any) -> None:
        super().__init__(replies, region=region, **kwargs)
        self.project, self.public_key_pem = project, public_key_pem
        self.tokens: set[str] = set()

    @property
    def token_uri(self) -> str:
        return f"{self.origin}/token"

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        if path == "/token":
            return self._token(raw)
        bearer = headers.get("authorization", "").removeprefix("Bearer ")
        if bearer not in self.tokens:
            self.violate("a request without a token this endpoint issued")
            return error_reply(401, "authentication_error", "invalid bearer token")
        prefix = f"/v1/projects/{self.project}/locations/{self.region}/publishers/anthropic/models/"
        if not path.startswith(prefix) or not path.endswith(":streamRawPredict"):
            self.violate(f"unexpected path {path}")
            return error_reply(404, "not_found_error", f"Not found: {path}")
        model = urllib.parse.unquote(path[len(prefix):-len(":streamRawPredict")])
        self.models.append(model)
        return self._answer(body, raw, model, framed=False)

    def _token(self, raw: bytes) -> Reply:
        """Google's token endpoint: a JWT-bearer grant signed by the service account's key."""
        from google.auth import jwt

        form = urllib.parse.parse_qs(raw.decode())
        try:
            # The assertion is addressed to Google's token endpoint whatever the key file's token_uri says.
            claims = jwt.decode(form["assertion"][0], certs=self.public_key_pem,
                                audience="https://oauth2.googleapis.com/token")
        except Exception as error:  # noqa: BLE001 - any bad grant is a 400, as Google answers
            self.violate(f"bad JWT grant: {error}")
            return Reply(status=400, json_body={"error": "invalid_grant"})
        token = f"ya29.fake-{len(self.tokens)}-{int(time.time())}"
        self.tokens.add(token)
        return Reply(json_body={"access_token": token, "expires_in": 3600, "token_type": "Bearer",
                                "scope": claims.get("scope", "")})


def service_account(tmp_path: Any, fake: FakeVertex) -> str:
    """A service-account key file whose token endpoint is `fake` (a fresh RSA key): its path."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    fake.public_key_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    path = tmp_path / "service-account.json"
    path.write_text(json.dumps({
        "type": "service_account", "project_id": fake.project, "private_key_id": "fake-key-id",
        "private_key": private, "client_email": f"agent@{fake.project}.iam.gserviceaccount.com",
        "client_id": "1", "token_uri": fake.token_uri}))
    return str(path)


