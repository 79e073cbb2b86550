"""A second Avro implementation for test/sinks/avro-format.test.ts: Apache Avro's Python library
(Debian's python3-avro). Reads {"schema": <avsc JSON>, "messages": [<hex>...]} on stdin, checks each
message's single-object header, decodes its body with the schema, and prints JSON:
{"canonical_form": ..., "messages": [{"fingerprint": <hex>, "datum": ...}]}.

Values print losslessly: ints as decimal strings, floats as JSON numbers (NaN and infinities as
strings), timestamp-micros as microseconds since the epoch and date as days since the epoch
(decimal strings, the values on the wire), uuid as its text.
"""
import datetime
import io
import json
import math
import sys

import avro.io
import avro.schema

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
MAGIC = b"\xc3\x01"
PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


def plain(value):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, datetime.datetime):
        return str((value - EPOCH) // datetime.timedelta(microseconds=1))
    if isinstance(value, datetime.date):
        return str((value - EPOCH.date()).days)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return str(value)  # uuid.UUID, should a version return one


def primitive_form(node):
    # python3-avro 1.11.1 leaves {"type":"long"} where a logical type was stripped; the spec's
    # PRIMITIVES rule (and Java) say "long". Collapse that one case, nothing else.
    if isinstance(node, dict):
        if set(node) == {"type"} and node["type"] in PRIMITIVES:
            return node["type"]
        return {k: primitive_form(v) for k, v in node.items()}
    if isinstance(node, list):
        return [primitive_form(v) for v in node]
    return node


def main():
    request = json.load(sys.stdin)
    schema = avro.schema.parse(json.dumps(request["schema"]))
    reader = avro.io.DatumReader(schema)
    out = []
    for text in request["messages"]:
        message = bytes.fromhex(text)
        if message[:2] != MAGIC:
            raise SystemExit("not a single-object encoded message: " + message[:2].hex())
        body = io.BytesIO(message[10:])
        datum = reader.read(avro.io.BinaryDecoder(body))
        if body.read(1):
            raise SystemExit("trailing bytes after the datum")
        out.append({"fingerprint": message[2:10].hex(), "datum": plain(datum)})
    canonical = json.dumps(primitive_form(json.loads(schema.canonical_form)), separators=(",", ":"), ensure_ascii=False)
    json.dump({"canonical_form": canonical, "messages": out}, sys.stdout)


main()
