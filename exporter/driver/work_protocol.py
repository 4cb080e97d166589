"""Bazel's persistent-worker protocol: WorkRequests in, WorkResponses out, in either encoding.

- protobuf, Bazel's default: each message is a varint length, then the message
  (src/main/protobuf/worker_protocol.proto). Only the fields the exporter uses are read:
    WorkRequest   1 arguments (repeated string), 2 inputs (repeated Input: 1 path, 2 digest),
                  3 request_id (int32), 4 cancel (bool); the others (verbosity, sandbox_dir) are
                  skipped
    WorkResponse  1 exit_code (int32), 2 output (string), 3 request_id (int32), 4 was_cancelled
                  (bool)
- JSON, with `requires-worker-protocol=json` (Bazel 4.2.3 also wants
  --experimental_worker_allow_json_protocol): one JSON object per message, in the proto3 JSON
  mapping (camelCase: requestId, exitCode). Bazel 4.2.3 writes requests without a trailing
  newline, so they are decoded from a byte stream, not read line by line.

The worker is not told which one Bazel speaks, so Reader tells them apart by the first request:
a JSON request starts with `{"` (or `{` and an indented line), which no protobuf WorkRequest
does (after its length, Bazel's first byte is field 1's tag, 0x0A, followed by the length of a
first argument that starts with "@" or "-"). Requests and responses are plain dicts in the JSON
mapping: {"arguments": [...], "inputs": [{"path": ...}], "requestId": n} and {"exitCode",
"output", "requestId"}.

Bytes that are not a WorkRequest never stop the worker: such a message becomes a request dict
with "malformed" (why), which the worker answers with an error at once. A protobuf message is
skipped by its length; invalid JSON is skipped to the end of its object (or to the next "{").
"""

import codecs
import json
import re

PROTO, JSON = "proto", "json"

_JSON_START = re.compile(rb'\{(?:"|\n +")')


# A varint is at most 10 bytes; a WorkRequest larger than this is not one Bazel would send.
_MAX_VARINT_BYTES = 10
MAX_MESSAGE_BYTES = 1 << 30


class Malformed(ValueError):
    """Bytes that cannot be a WorkRequest."""


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
        if shift >= 7 * _MAX_VARINT_BYTES:
            raise Malformed("a varint longer than 10 bytes")
    return None


def _field_varint(data, pos):
    """A varint inside a complete message: running out of bytes there is malformed."""
    found = _varint(data, pos)
    if found is None:
        raise Malformed("a message ends inside a varint")
    return found


def _field_bytes(data, pos):
    size, pos = _field_varint(data, pos)
    if pos + size > len(data):
        raise Malformed("a field is longer than its message")
    return data[pos:pos + size], pos + size


def _fields(message):
    """(field number, wire type, value) of each field of one message; bytes for wire type 2."""
    pos = 0
    while pos < len(message):
        key, pos = _field_varint(message, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _field_varint(message, pos)
        elif wire == 2:
            value, pos = _field_bytes(message, pos)
        elif wire in (1, 5):
            value, pos = None, pos + (8 if wire == 1 else 4)
            if pos > len(message):
                raise Malformed("a fixed-size field is longer than its message")
        else:
            raise Malformed(f"field {field} has wire type {wire}, which protobuf messages do not use")
        yield field, wire, value


def _text(value, what):
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Malformed(f"{what} is not UTF-8 ({e.reason} at byte {e.start})") from None


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
    """The dict of one WorkRequest's protobuf bytes (without its length prefix); a message that
    is not one gives {"malformed": why, "requestId": its id if that was read}."""
    request: dict = {"arguments": [], "inputs": [], "requestId": 0}
    try:
        for field, wire, value in _fields(message):
            if (field, wire) == (1, 2):
                request["arguments"].append(_text(value, "an argument"))
            elif (field, wire) == (2, 2):
                request["inputs"].append(_decode_input(value))
            elif (field, wire) == (3, 0):
                request["requestId"] = _signed32(value)
            elif (field, wire) == (4, 0):
                request["cancel"] = bool(value)
    except Malformed as e:
        return {"malformed": str(e), "requestId": request["requestId"]}
    return request


def _decode_input(message):
    found = {"path": ""}
    for field, wire, value in _fields(message):
        if (field, wire) == (1, 2):
            found["path"] = _text(value, "an input's path")
    return found


def _length_delimited(field, data):
    return _encode_varint(field << 3 | 2) + _encode_varint(len(data)) + data


def encode_request(request):
    """A WorkRequest dict as protobuf bytes with its length prefix (for tests and restarts)."""
    body = b"".join(_length_delimited(1, a.encode()) for a in request.get("arguments", []))
    body += b"".join(_length_delimited(2, _length_delimited(1, i["path"].encode())) for i in request.get("inputs", []))
    if request.get("requestId"):
        body += b"\x18" + _encode_varint(request["requestId"])
    if request.get("cancel"):
        body += b"\x20\x01"
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
    if response.get("wasCancelled"):
        body += b"\x20\x01"
    return _encode_varint(len(body)) + body


def _object_end(text):
    """The index after the JSON object that text starts with, or None while it is incomplete."""
    depth, in_string, escaped = 0, False, False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _checked_json(request):
    """A decoded JSON request, or a malformed one when its fields have the wrong types."""
    request_id = request.get("requestId", 0) if isinstance(request, dict) else 0
    request_id = request_id if isinstance(request_id, int) and not isinstance(request_id, bool) else 0
    arguments = request.get("arguments", []) if isinstance(request, dict) else None
    inputs = request.get("inputs", []) if isinstance(request, dict) else None
    if not isinstance(arguments, list) or not all(isinstance(a, str) for a in arguments):
        return {"malformed": "`arguments` is not a list of strings", "requestId": request_id}
    if not isinstance(inputs, list) or not all(isinstance(i, dict) and isinstance(i.get("path", ""), str) for i in inputs):
        return {"malformed": "`inputs` is not a list of {\"path\": ...} objects", "requestId": request_id}
    return dict(request, arguments=arguments, inputs=[{"path": i.get("path", "")} for i in inputs], requestId=request_id)


class Reader:
    """Decodes the WorkRequests of a byte stream; the first request decides the protocol."""

    def __init__(self, pending=b"", protocol=None):
        self.protocol = protocol
        self.buffer = pending  # bytes not yet decoded into a request
        self._text = ""  # JSON: decoded text not yet parsed
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")

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
            try:
                header = _varint(self.buffer, 0)
                if header is not None and header[0] > MAX_MESSAGE_BYTES:
                    raise Malformed(f"a message of {header[0]} bytes")
            except Malformed as e:  # the stream has no boundary left to find: drop it
                self.buffer = b""
                return requests + [{"malformed": f"{e}; the bytes received so far are dropped", "requestId": 0}]
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
            if not self._text:
                return requests
            if not self._text.startswith("{"):
                start = self._text.find("{")
                junk, self._text = (self._text, "") if start < 0 else (self._text[:start], self._text[start:])
                requests.append({"malformed": f"not a JSON object: {junk[:40]!r}", "requestId": 0})
                continue
            try:
                request, end = decoder.raw_decode(self._text)
            except (json.JSONDecodeError, RecursionError) as e:
                # RecursionError: nested deeper than Python's stack (a RecursionError killed the worker)
                end = _object_end(self._text)
                if end is None:
                    return requests  # an incomplete object: wait for more
                why = e.msg if isinstance(e, json.JSONDecodeError) else "nested too deeply"
                requests.append({"malformed": f"invalid JSON ({why})", "requestId": 0})
            else:
                requests.append(_checked_json(request))
            self._text = self._text[end:]

    def undecoded(self):
        """The bytes received but not yet decoded into a request."""
        return self._text.encode("utf-8") + self.buffer if self.protocol == JSON else self.buffer

    def encode(self, request):
        """A request as this stream's protocol spells it (to hand it to a restarted worker)."""
        return json.dumps(request).encode("utf-8") if self.protocol == JSON else encode_request(request)
