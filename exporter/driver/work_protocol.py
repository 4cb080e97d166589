"""Bazel's persistent-worker protocol: WorkRequests in, WorkResponses out, in either encoding.

- protobuf, Bazel's default: each message is a varint length, then the message
  (src/main/protobuf/worker_protocol.proto). Only the fields the exporter uses are read:
    WorkRequest   1 arguments (repeated string), 3 request_id (int32); the others (inputs,
                  cancel, verbosity, sandbox_dir) are skipped
    WorkResponse  1 exit_code (int32), 2 output (string), 3 request_id (int32)
- JSON, with `requires-worker-protocol=json` (Bazel 4.2.3 also wants
  --experimental_worker_allow_json_protocol): one JSON object per message, in the proto3 JSON
  mapping (camelCase: requestId, exitCode). Bazel 4.2.3 writes requests without a trailing
  newline, so they are decoded from a byte stream, not read line by line.

The worker is not told which one Bazel speaks, so Reader tells them apart by the first request:
a JSON request starts with `{"` (or `{` and an indented line), which no protobuf WorkRequest
does (after its length, Bazel's first byte is field 1's tag, 0x0A, followed by the length of a
first argument that starts with "@" or "-"). Requests and responses are plain dicts in the JSON
mapping: {"arguments": [...], "requestId": n} and {"exitCode", "output", "requestId"}.
"""

import codecs
import json
import re

PROTO, JSON = "proto", "json"

_JSON_START = re.compile(rb'\{(?:"|\n +")')


def _varint(data, pos):
    """(value, position after it), or None while the bytes end inside it."""
    value, shift = 0, 0
    while pos < len(data):
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return value, pos
        shift += 7
    return None


def _encode_varint(value):
    if value < 0:
        value += 1 << 64  # int32 fields: negative values take ten bytes, as protobuf writes them
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _signed32(value):
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def decode_request(message):
    """The dict of one WorkRequest's protobuf bytes (without its length prefix)."""
    request = {"arguments": [], "requestId": 0}
    pos = 0
    while pos < len(message):
        key, pos = _varint(message, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(message, pos)
            if field == 3:
                request["requestId"] = _signed32(value)
            elif field == 4:
                request["cancel"] = bool(value)
        elif wire == 2:
            size, pos = _varint(message, pos)
            value, pos = message[pos:pos + size], pos + size
            if field == 1:
                request["arguments"].append(value.decode("utf-8"))
        elif wire == 5:
            pos += 4
        elif wire == 1:
            pos += 8
        else:
            raise ValueError(f"WorkRequest field {field} has wire type {wire}, which protobuf messages do not use")
    return request


def encode_request(request):
    """A WorkRequest dict as protobuf bytes with its length prefix (for tests and restarts)."""
    body = b"".join(b"\x0a" + _encode_varint(len(a.encode())) + a.encode() for a in request.get("arguments", []))
    if request.get("requestId"):
        body += b"\x18" + _encode_varint(request["requestId"])
    return _encode_varint(len(body)) + body


def encode_response(response, protocol):
    """A WorkResponse dict as the bytes to write: protobuf with its length prefix, or a JSON line."""
    if protocol == JSON:
        return (json.dumps(response) + "\n").encode("utf-8")
    body = b""
    if response.get("exitCode"):
        body += b"\x08" + _encode_varint(response["exitCode"])
    output = response.get("output", "").encode("utf-8")
    if output:
        body += b"\x12" + _encode_varint(len(output)) + output
    if response.get("requestId"):
        body += b"\x18" + _encode_varint(response["requestId"])
    return _encode_varint(len(body)) + body


def decode_responses(data, protocol):
    """(the WorkResponse dicts in data, the bytes after the last complete one); for tests."""
    if protocol == JSON:
        lines = data.split(b"\n")
        return [json.loads(line) for line in lines[:-1] if line.strip()], lines[-1]
    found, pos = [], 0
    while True:
        header = _varint(data, pos)
        if header is None or header[1] + header[0] > len(data):
            return found, data[pos:]
        size, start = header
        response, body = {"exitCode": 0, "output": "", "requestId": 0}, data[start:start + size]
        at = 0
        while at < len(body):
            key, at = _varint(body, at)
            if key & 7 == 0:
                value, at = _varint(body, at)
                response[{1: "exitCode", 3: "requestId", 4: "wasCancelled"}.get(key >> 3, "?")] = _signed32(value)
            else:
                length, at = _varint(body, at)
                response["output"], at = body[at:at + length].decode("utf-8"), at + length
        found.append(response)
        pos = start + size


class Reader:
    """Decodes the WorkRequests of a byte stream; the first request decides the protocol."""

    def __init__(self, pending=b"", protocol=None):
        self.protocol = protocol
        self.buffer = pending  # bytes not yet decoded into a request
        self._text = ""  # JSON: decoded text not yet parsed
        self._utf8 = codecs.getincrementaldecoder("utf-8")()

    def _decide(self):
        if self.protocol is None and self.buffer:
            if not self.buffer.startswith(b"{"):
                self.protocol = PROTO
            elif _JSON_START.match(self.buffer):
                self.protocol = JSON
            elif len(self.buffer) > 1 and not (self.buffer[1:2] == b"\n" and re.fullmatch(rb"\{\n *", self.buffer)):
                self.protocol = PROTO  # a 123-byte protobuf message: its length byte is "{"
        return self.protocol

    def feed(self, chunk):
        """Adds bytes read from stdin; returns the requests they completed."""
        self.buffer += chunk
        if self._decide() == JSON:
            return self._json_requests()
        if self.protocol == PROTO:
            return self._proto_requests()
        return []

    def _proto_requests(self):
        requests = []
        while True:
            header = _varint(self.buffer, 0)
            if header is None or header[1] + header[0] > len(self.buffer):
                return requests
            size, start = header
            requests.append(decode_request(self.buffer[start:start + size]))
            self.buffer = self.buffer[start + size:]

    def _json_requests(self):
        self._text += self._utf8.decode(self.buffer)
        self.buffer = b""
        decoder, requests = json.JSONDecoder(), []
        while True:
            self._text = self._text.lstrip()
            try:
                request, end = decoder.raw_decode(self._text)
            except json.JSONDecodeError:
                return requests  # empty, or an incomplete object: wait for more
            self._text = self._text[end:]
            requests.append(request)

    def undecoded(self):
        """The bytes received but not yet decoded into a request."""
        return self._text.encode("utf-8") + self.buffer if self.protocol == JSON else self.buffer

    def encode(self, request):
        """A request as this stream's protocol spells it (to hand it to a restarted worker)."""
        return json.dumps(request).encode("utf-8") if self.protocol == JSON else encode_request(request)
