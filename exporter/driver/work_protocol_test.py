"""The worker protocol codec against the protobuf library's own encoding of Bazel's messages (their
descriptors are built here from the field numbers of Bazel's worker_protocol.proto), and the
reader's choice between protobuf and JSON."""

import json
import os
import select
import subprocess
import sys
import time

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from runfiles import Runfiles

from exporter.driver import work_protocol
from exporter.tests.worker_harness import decode_responses


def _messages():
    """WorkRequest, Input and WorkResponse classes, as worker_protocol.proto declares them."""
    proto = descriptor_pb2.FileDescriptorProto(name="worker_protocol_test.proto", package="blaze.worker",
                                               syntax="proto3")
    F = descriptor_pb2.FieldDescriptorProto

    def message(name, fields):
        m = proto.message_type.add(name=name)
        for number, (field, kind, label, type_name) in enumerate(fields, 1):
            if field is None:
                continue
            m.field.add(name=field, number=number, type=kind, label=label, type_name=type_name)

    optional, repeated = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    message("Input", [("path", F.TYPE_STRING, optional, None), ("digest", F.TYPE_BYTES, optional, None)])
    message("WorkRequest", [
        ("arguments", F.TYPE_STRING, repeated, None),
        ("inputs", F.TYPE_MESSAGE, repeated, ".blaze.worker.Input"),
        ("request_id", F.TYPE_INT32, optional, None),
        ("cancel", F.TYPE_BOOL, optional, None),
        ("verbosity", F.TYPE_INT32, optional, None),
        ("sandbox_dir", F.TYPE_STRING, optional, None),
    ])
    message("WorkResponse", [
        ("exit_code", F.TYPE_INT32, optional, None),
        ("output", F.TYPE_STRING, optional, None),
        ("request_id", F.TYPE_INT32, optional, None),
        ("was_cancelled", F.TYPE_BOOL, optional, None),
    ])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"blaze.worker.{name}"))
            for name in ("WorkRequest", "WorkResponse")}


MESSAGES = _messages()


def _delimited(message):
    """What Java's writeDelimitedTo writes: the size as a varint, then the message."""
    body = message.SerializeToString()
    return work_protocol._encode_varint(len(body)) + body


def _bazel_request(arguments, request_id, **more):
    request = MESSAGES["WorkRequest"](arguments=arguments, request_id=request_id, **more)
    request.inputs.add(path="exporter/main.py", digest=b"\x01\x02" * 16)
    return _delimited(request)


def test_requests_decode_as_protobuf_encodes_them():
    stream = _bazel_request(["@bazel-out/k8-fastbuild/bin/a.params"], 7, verbosity=10, sandbox_dir="sb") + \
        _bazel_request(["--flag", "@é.params"], 0)
    reader = work_protocol.Reader()
    requests = reader.feed(stream)
    assert reader.protocol == work_protocol.PROTO
    inputs = [{"path": "exporter/main.py"}]
    assert requests == [{"arguments": ["@bazel-out/k8-fastbuild/bin/a.params"], "inputs": inputs, "requestId": 7},
                        {"arguments": ["--flag", "@é.params"], "inputs": inputs, "requestId": 0}]


@pytest.mark.parametrize("response", [
    {"exitCode": 0, "output": "", "requestId": 3},
    {"exitCode": 1, "output": "ERROR: //zoo:m: ünïcode\n(full output: x.log)\n", "requestId": 12345},
    {"exitCode": -1, "output": "x" * 300, "requestId": 0},
    {"exitCode": 0, "output": "", "requestId": 4, "wasCancelled": True},  # the answer to a cancel request
])
def test_responses_parse_with_protobuf(response):
    data = work_protocol.encode_response(response, work_protocol.PROTO)
    size, start = work_protocol._varint(data, 0)
    assert start + size == len(data)
    parsed = MESSAGES["WorkResponse"].FromString(data[start:])
    assert (parsed.exit_code, parsed.output, parsed.request_id, parsed.was_cancelled) == (
        response["exitCode"], response["output"], response["requestId"], response.get("wasCancelled", False))
    assert decode_responses(data, work_protocol.PROTO) == ([response], b"")


def test_a_response_that_ends_inside_a_field_is_malformed():
    """The tests' reader of responses (exporter/tests/worker_harness.py). Before, in
    work_protocol.py: a TypeError from unpacking None."""
    with pytest.raises(work_protocol.Malformed, match="ends inside a varint"):
        decode_responses(b"\x02\x08\x80", work_protocol.PROTO)  # exit_code's varint is cut


def test_encoded_requests_are_protobuf_s():
    request = {"arguments": ["@x.params"], "inputs": [{"path": "a/b.py"}], "requestId": 300}
    expected = MESSAGES["WorkRequest"](arguments=["@x.params"], request_id=300)
    expected.inputs.add(path="a/b.py")
    assert work_protocol.encode_request(request) == _delimited(expected)
    cancel = MESSAGES["WorkRequest"](request_id=7, cancel=True)
    assert work_protocol.encode_request({"requestId": 7, "cancel": True}) == _delimited(cancel)
    assert work_protocol.Reader().feed(_delimited(cancel)) == [
        {"arguments": [], "inputs": [], "requestId": 7, "cancel": True}]


def test_requests_split_anywhere_wait_for_their_last_byte():
    stream = b"".join(_bazel_request([f"@{i}.params"], i) for i in range(1, 4))
    reader = work_protocol.Reader()
    seen = []
    for i in range(len(stream)):
        seen += reader.feed(stream[i:i + 1])
    assert [r["requestId"] for r in seen] == [1, 2, 3]
    assert reader.undecoded() == b""


@pytest.mark.parametrize("argument_length", [32, 34, 10, 40])
def test_a_123_byte_protobuf_request_is_not_taken_for_json(argument_length):
    """Its length prefix is "{"; its first argument's length may be " ", '"' or a newline."""
    # Each argument takes a tag and a length byte, request_id a tag and its value: 123 in all.
    arguments = ["@" + "p" * (argument_length - 1), "a" * (123 - 6 - argument_length)]
    data = _delimited(MESSAGES["WorkRequest"](arguments=arguments, request_id=5))
    assert data[:1] == b"{" and data[2] == argument_length, data[:3]
    reader = work_protocol.Reader()
    requests = []
    for i in range(len(data)):
        requests += reader.feed(data[i:i + 1])
    assert reader.protocol == work_protocol.PROTO
    assert requests == [{"arguments": arguments, "inputs": [], "requestId": 5}]


@pytest.mark.parametrize("text", [
    json.dumps({"arguments": ["@a.params"], "requestId": 1}),
    json.dumps({"arguments": ["@a.params"], "requestId": 1}, indent=2),
    json.dumps({"arguments": ["@a.params"], "requestId": 1}, separators=(",", ":")),
])
def test_json_requests_without_newlines_are_read_as_json(text):
    reader = work_protocol.Reader()
    data = (text + text).encode()
    requests = []
    for i in range(0, len(data), 5):
        requests += reader.feed(data[i:i + 5])
    assert reader.protocol == work_protocol.JSON
    assert requests == [{"arguments": ["@a.params"], "inputs": [], "requestId": 1}] * 2
    line = work_protocol.encode_response({"exitCode": 0, "output": "", "requestId": 1}, work_protocol.JSON)
    assert json.loads(line) == {"exitCode": 0, "output": "", "requestId": 1} and line.endswith(b"\n")


@pytest.mark.parametrize("protocol", [work_protocol.PROTO, work_protocol.JSON])
def test_pending_requests_survive_a_restart(protocol):
    """A restarting worker re-encodes the requests it had read (worker.py _restart)."""
    first = {"arguments": ["@1.params"], "inputs": [{"path": "zoo/m.py"}], "requestId": 1}
    second = {"arguments": ["@2.params"], "inputs": [], "requestId": 2}
    encode = (lambda r: json.dumps(r).encode()) if protocol == work_protocol.JSON else work_protocol.encode_request
    reader = work_protocol.Reader()
    data = encode(first) + encode(second)
    assert reader.feed(data[:-3]) == [first]
    pending = b"".join(reader.encode(r) for r in [first]) + reader.undecoded()
    again = work_protocol.Reader(pending, reader.protocol)
    assert again.feed(data[-3:]) == [first, second]


def _valid_proto(request_id):
    return _bazel_request([f"@{request_id}.params"], request_id)


@pytest.mark.parametrize("body, why", [
    (b"\x0a\x02\xff\xfe\x18\x04", "not UTF-8"),  # an argument of two bytes that are not UTF-8
    (b"\x0a\x09ab\x18", "longer than its message"),
    (b"\x18\x80\x80", "ends inside a varint"),
    (b"\x0f\x00", "wire type 7"),
])
def test_a_malformed_protobuf_request_is_answered_and_the_next_one_read(body, why):
    reader = work_protocol.Reader(protocol=work_protocol.PROTO)
    requests = reader.feed(work_protocol._encode_varint(len(body)) + body + _valid_proto(9))
    assert len(requests) == 2 and why in requests[0]["malformed"], requests
    assert requests[1]["requestId"] == 9 and "malformed" not in requests[1]


def test_an_overlong_length_drops_the_stream_but_answers():
    reader = work_protocol.Reader(protocol=work_protocol.PROTO)
    requests = reader.feed(b"\xff" * 11 + _valid_proto(3))
    assert [("malformed" in r) for r in requests] == [True]
    assert reader.feed(_valid_proto(4))[0]["requestId"] == 4  # a later message reads again


@pytest.mark.parametrize("junk, why", [
    (b'{"arguments": [1,]}', "invalid JSON"),
    (b'{"arguments": "@a.params", "requestId": 5}', "`arguments`"),
    (b'{"arguments": [], "inputs": [3], "requestId": 5}', "`inputs`"),
    (b'nonsense ', "not a JSON object"),
])
def test_malformed_json_is_answered_and_the_next_request_read(junk, why):
    reader = work_protocol.Reader()
    first = reader.feed(b'{"arguments": ["@a.params"], "requestId": 1}')
    requests = first + reader.feed(junk + b'{"arguments": ["@b.params"], "requestId": 2}')
    assert [r.get("requestId") for r in requests if "malformed" not in r] == [1, 2]
    (bad,) = [r for r in requests if "malformed" in r]
    assert why in bad["malformed"]


def test_invalid_utf8_in_json_reads_with_a_replacement_character():
    reader = work_protocol.Reader()
    (request,) = reader.feed(b'{"arguments": ["@\xff.params"], "requestId": 3}')
    assert request["arguments"] == ["@\ufffd.params"]


@pytest.mark.parametrize("protocol", [work_protocol.PROTO, work_protocol.JSON])
def test_fuzzed_streams_never_raise(protocol):
    """Random bytes, cut anywhere, mixed into valid requests: the reader returns requests or
    malformed ones, and never raises (the worker answers each and keeps serving)."""
    import random

    rng = random.Random(20261125)
    encode = (lambda i: json.dumps({"arguments": [f"@{i}.params"], "requestId": i}).encode()) \
        if protocol == work_protocol.JSON else _valid_proto
    for case in range(300):
        stream = bytearray(b"".join(encode(i) for i in range(1, 4)))
        for _ in range(rng.randint(1, 6)):
            at = rng.randrange(len(stream))
            stream[at:at + rng.randint(0, 3)] = bytes(rng.randrange(256) for _ in range(rng.randint(0, 4)))
        reader = work_protocol.Reader(protocol=protocol)
        pos = 0
        while pos < len(stream):
            step = rng.randint(1, 40)
            for request in reader.feed(bytes(stream[pos:pos + step])):
                assert "malformed" in request or isinstance(request["arguments"], list), (case, request)
            pos += step


DEEP = b'{"arguments": ' + b"[" * 100_000 + b"]" * 100_000 + b', "requestId": 6}'


def test_json_nested_deeper_than_python_s_stack_is_malformed():
    """Before: json raised RecursionError out of the reader, which killed the worker."""
    reader = work_protocol.Reader()
    requests = reader.feed(DEEP + b'{"arguments": ["@b.params"], "requestId": 7}')
    assert [("malformed" in r) for r in requests] == [True, False], requests
    assert "nested too deeply" in requests[0]["malformed"]
    assert requests[1]["requestId"] == 7


class _Worker:
    """A worker without warm-up (its --warm command runs none), spoken to in JSON."""

    def __init__(self, folder):
        main = Runfiles.Create().Rlocation("rules_torch_export/exporter/main.py")
        self.proc = subprocess.Popen([sys.executable, main, "--warm=report", "--persistent_worker"], cwd=folder,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdin and self.proc.stdout  # both piped
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.received = b""

    def send(self, data):
        self.stdin.write(data)
        self.stdin.flush()

    def receive(self, timeout=60):
        end = time.monotonic() + timeout
        while b"\n" not in self.received:
            ready, _, _ = select.select([self.stdout], [], [], max(0, end - time.monotonic()))
            assert ready, f"no WorkResponse within {timeout} s: the worker is stuck"
            chunk = os.read(self.stdout.fileno(), 1 << 16)
            assert chunk, "the worker died"
            self.received += chunk
        line, self.received = self.received.split(b"\n", 1)
        return json.loads(line)


@pytest.fixture
def light_worker(tmp_path):
    """A worker in tmp_path, with a warm-up request's params and config (no torch needed)."""
    (tmp_path / "warm.json").write_text(json.dumps({"label": "//zoo:warm", "outputs": {"marker": "warm.out"}}))
    (tmp_path / "warm.params").write_text("warm_up\nwarm.json\n")
    worker = _Worker(tmp_path)
    yield worker
    worker.stdin.close()
    worker.proc.wait(timeout=60)


def _request(request_id, params, inputs=("warm.json",)):
    return json.dumps({"arguments": [params], "inputs": [{"path": p} for p in inputs],
                       "requestId": request_id}).encode()


def test_the_worker_answers_deep_json_and_keeps_serving(light_worker, tmp_path):
    light_worker.send(DEEP + _request(8, "@warm.params"))
    first, second = light_worker.receive(), light_worker.receive()
    assert first["exitCode"] == 1 and "nested too deeply" in first["output"], first
    assert second == {"exitCode": 0, "output": "", "requestId": 8}


@pytest.mark.parametrize("fifo_as", ["params", "config"])
def test_a_fifo_for_a_file_blocks_nothing(light_worker, tmp_path, fifo_as):
    """Before: the worker's parent opened the params file and the config to read the request's
    label and outputs, so a FIFO (no writer) blocked it, and every request after it."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "reads_fifo.params").write_text("warm_up\nfifo\n")
    params = "@fifo" if fifo_as == "params" else "@reads_fifo.params"
    light_worker.send(_request(1, params, inputs=("warm.json", "fifo")) + _request(2, "@warm.params"))
    by_id = {r["requestId"]: r for r in (light_worker.receive(), light_worker.receive())}
    assert by_id[2] == {"exitCode": 0, "output": "", "requestId": 2}
    assert by_id[1]["exitCode"] != 0 and "fifo is not a regular file" in by_id[1]["output"], by_id[1]
    assert len(by_id[1]["output"].splitlines()) == 1


def test_a_request_without_inputs_is_refused(light_worker, tmp_path):
    """Before: it ran in the real execroot, where every file of the workspace is visible."""
    light_worker.send(_request(3, "@warm.params", inputs=()))
    response = light_worker.receive()
    assert response["exitCode"] == 1 and response["requestId"] == 3
    assert response["output"].startswith("ERROR: //zoo:warm: the exporter worker refuses a WorkRequest that "
                                         "lists no inputs"), response["output"]
    assert len(response["output"].splitlines()) == 1
    assert not (tmp_path / "warm.out").exists()


def test_a_warm_up_without_its_marker_is_answered_in_one_line(light_worker, tmp_path):
    """request.run says it never raises. Before: a warm-up config without outputs["marker"]
    raised KeyError in the child, and the answer was "the request did not finish"."""
    (tmp_path / "bare.json").write_text(json.dumps({"label": "//zoo:bare", "outputs": {}}))
    (tmp_path / "bare.params").write_text("warm_up\nbare.json\n")
    light_worker.send(_request(5, "@bare.params", inputs=("bare.json",)) + _request(6, "@warm.params"))
    by_id = {r["requestId"]: r for r in (light_worker.receive(), light_worker.receive())}
    assert by_id[5] == {"exitCode": 2, "requestId": 5,
                        "output": "exporter: the config bare.json of a warm_up request names no `marker` output\n"}
    assert by_id[6] == {"exitCode": 0, "output": "", "requestId": 6}
