"""Reads a FlatBuffers binary through its .fbs schema, with the standard library only.

ExecuTorch ships program.fbs (and scalar_type.fbs) inside its wheel. Its generated Python
classes are private (exir._serialize.generated), import all of torch, and in executorch 1.4.1
some accessors are broken (they call a module instead of a class). flatc is not installable
at build time. So this module parses the installed schema itself and reads fields by their
vtable slot: the schema is the single source of truth, and nothing here knows a field offset.

The buffer is hostile: every offset, length and position is checked against it before it is
read, and anything the schema does not allow (a string that is not UTF-8, an enum or union
value it does not declare) raises Corrupt, never a parser's own error. (The `flatbuffers`
package checks nothing: a corrupt offset makes it raise struct.error or read the wrong bytes.)

Supported: tables, enums, unions, vectors, strings and scalars, which is all program.fbs uses.
"""

import importlib.util
import os
import re
import struct

# Little-endian struct formats of the schema's scalar types.
_SCALARS = {
    name: struct.Struct("<" + code) for name, code in {
        "bool": "?", "byte": "b", "ubyte": "B", "int8": "b", "uint8": "B", "short": "h", "ushort": "H",
        "int16": "h", "uint16": "H", "int": "i", "uint": "I", "int32": "i", "uint32": "I", "long": "q",
        "ulong": "Q", "int64": "q", "uint64": "Q", "float": "f", "double": "d", "float32": "f",
        "float64": "d"}.items()
}
_U32, _I32, _U16 = _SCALARS["uint32"], _SCALARS["int32"], _SCALARS["uint16"]


class Corrupt(ValueError):
    """The buffer is not what its schema says: an offset or a size points outside it, or a value
    is one the schema does not allow. Readers of files add the file's name (core.errors.BadFile)."""
_TOKEN = re.compile(r'"[^"]*"|[A-Za-z_][\w.]*|-?\d+(?:\.\d+)?|\S')


def executorch_schema_path():
    """program.fbs of the installed executorch, found without importing executorch (or torch)."""
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the executorch package is not installed, so program.fbs is missing")
    root = list(spec.submodule_search_locations)[0]
    for relative in ("exir/_serialize/program.fbs", "schema/program.fbs"):
        path = os.path.join(root, relative)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"no program.fbs under {root}")


class Schema:
    """Tables (field name -> (slot, type)), enums (value -> name) and unions of .fbs files."""

    def __init__(self, path):
        self.tables, self.enums, self.unions, self.defaults = {}, {}, {}, {}
        self.root_type, self.file_identifier = None, None
        self._parse_file(path, set())
        # Slots are numbered once everything is parsed: a union may be declared after its use.
        self.tables = {name: self._number_slots(fields) for name, fields in self.tables.items()}

    def _number_slots(self, fields):
        numbered, slot = {}, 0
        for field, ftype in fields:
            numbered[field] = (slot, ftype)
            # A union field takes two slots: its type tag, then the value.
            slot += 2 if ftype[0] == "type" and ftype[1] in self.unions else 1
        return numbered

    def _parse_file(self, path, seen):
        if path in seen:
            return
        seen.add(path)
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"//[^\n]*", "", f.read())
        tokens = _TOKEN.findall(text)
        i = 0
        while i < len(tokens):
            word = tokens[i]
            if word == "include":
                self._parse_file(os.path.join(os.path.dirname(path), tokens[i + 1].strip('"')), seen)
                i = tokens.index(";", i) + 1
            elif word in ("table", "struct"):
                if word == "struct":
                    raise ValueError(f"{path}: structs are not supported by this reader")
                i = self._parse_table(tokens, i + 1)
            elif word == "enum":
                i = self._parse_enum(tokens, i + 1)
            elif word == "union":
                i = self._parse_union(tokens, i + 1)
            else:  # namespace, attribute, file_identifier, file_extension, root_type
                end = tokens.index(";", i)
                if word == "root_type":
                    self.root_type = tokens[i + 1]
                elif word == "file_identifier":
                    self.file_identifier = tokens[i + 1].strip('"')
                i = end + 1

    def _parse_table(self, tokens, i):
        name, i = tokens[i], tokens.index("{", i) + 1
        fields = []
        while tokens[i] != "}":
            field, colon, i = tokens[i], tokens[i + 1], i + 2
            assert colon == ":", f"table {name}: expected ':' after {field}"
            # Types are looked up by their own name: flat_tensor.fbs writes
            # executorch_flatbuffer.ScalarType for the enum that scalar_type.fbs declares.
            if tokens[i] == "[":
                ftype, i = ("vector", tokens[i + 1].rsplit(".", 1)[-1]), i + 3
            else:
                ftype, i = ("type", tokens[i].rsplit(".", 1)[-1]), i + 1
            if tokens[i] == "=":  # a default: a number, or an enum member's name
                self.defaults[(name, field)] = _number(tokens[i + 1])
            i = tokens.index(";", i) + 1  # skips attributes
            fields.append((field, ftype))
        self.tables[name] = fields
        return i + 1

    def _parse_enum(self, tokens, i):
        name, underlying = tokens[i], tokens[i + 2]  # enum Name : type {
        i = tokens.index("{", i) + 1
        values, next_value = {}, 0
        while tokens[i] != "}":
            member, i = tokens[i], i + 1
            if tokens[i] == "=":
                next_value, i = int(tokens[i + 1]), i + 2
            values[next_value] = member
            next_value += 1
            if tokens[i] == ",":
                i += 1
        self.enums[name] = (underlying, values)
        return i + 1

    def _parse_union(self, tokens, i):
        name, i = tokens[i], tokens.index("{", i) + 1
        members = {}
        while tokens[i] != "}":
            members[len(members) + 1] = tokens[i]  # 0 is NONE
            i += 2 if tokens[i + 1] == "," else 1
        self.unions[name] = members
        return i + 1


class _Buffer:
    """The bytes, read only through checked positions."""

    __slots__ = ("data", "size")

    def __init__(self, data):
        self.data, self.size = data, len(data)

    def need(self, at, length, what):
        if at < 0 or length < 0 or at + length > self.size:
            raise Corrupt(f"{what} at byte {at} ({length} bytes) lies outside the {self.size}-byte buffer")

    def get(self, fmt, at, what="a value"):
        self.need(at, fmt.size, what)
        return fmt.unpack_from(self.data, at)[0]

    def follow(self, at, what):
        """The position an offset at `at` points to (FlatBuffers offsets are relative, unsigned)."""
        target = at + self.get(_U32, at, what)
        self.need(target, 4, what)
        return target

    def vector(self, at, stride, what):
        """(position of the first element, length) of the vector an offset at `at` points to."""
        start = self.follow(at, what)
        length = self.get(_U32, start, what)
        self.need(start + 4, length * stride, f"{what} of {length} elements")
        return start + 4, length


class Table:
    """One table of a buffer; read fields as attributes: `program.execution_plan[0].name`."""

    __slots__ = ("_schema", "_name", "_buf", "_pos")

    def __init__(self, schema, name, buf, pos):
        self._schema, self._name = schema, name
        self._buf = buf if isinstance(buf, _Buffer) else _Buffer(buf)
        self._pos = pos

    def _field(self, slot):
        """The position of the field in `slot`, 0 when the table does not have it."""
        buf = self._buf
        vtable = self._pos - buf.get(_I32, self._pos, f"table {self._name}")
        vtable_size = buf.get(_U16, vtable, f"the vtable of table {self._name}")
        if 4 + 2 * slot + 2 > vtable_size:
            return 0
        offset = buf.get(_U16, vtable + 4 + 2 * slot, f"the vtable of table {self._name}")
        return self._pos + offset if offset else 0

    def __getattr__(self, field):
        try:
            slot, (kind, type_name) = self._schema.tables[self._name][field]
        except KeyError:
            raise AttributeError(f"table {self._name} has no field {field!r}") from None
        at = self._field(slot)
        if kind == "vector":
            return _Vector(self, type_name, at, f"{self._name}.{field}")
        if type_name in self._schema.unions:
            tag = self._buf.get(_SCALARS["uint8"], at, f"{self._name}.{field}") if at else 0
            value_at = self._field(slot + 1)
            if tag == 0 or not value_at:
                return None
            member = self._schema.unions[type_name].get(tag)
            if member is None:
                raise Corrupt(f"{self._name}.{field} has union type {tag}, which {type_name} does not declare")
            return self._read(member, value_at, f"{self._name}.{field}")
        if not at:
            return self._default(type_name, field)
        return self._read(type_name, at, f"{self._name}.{field}")

    def has(self, field):
        """Whether the table holds `field` (an absent vector reads as an empty one)."""
        slot = self._schema.tables[self._name][field][0]
        return bool(self._field(slot))

    def _default(self, type_name, field=None):
        declared = self._schema.defaults.get((self._name, field))
        if declared is not None:  # etdump's `instruction_id:int = -1`
            return declared
        if type_name in _SCALARS or type_name in self._schema.enums:
            return self._enum_name(type_name, 0, "") if type_name in self._schema.enums else 0
        return None

    def _enum_name(self, type_name, raw, what):
        name = self._schema.enums[type_name][1].get(raw)
        if name is None:
            raise Corrupt(f"{what} is {raw}, which enum {type_name} does not declare")
        return name

    def _read(self, type_name, pos, what):
        """The value of type `type_name` stored at absolute position `pos` of the buffer."""
        if type_name in _SCALARS:
            return self._buf.get(_SCALARS[type_name], pos, what)
        if type_name in self._schema.enums:
            underlying = self._schema.enums[type_name][0]
            return self._enum_name(type_name, self._buf.get(_SCALARS[underlying], pos, what), what)
        if type_name == "string":
            start, length = self._buf.vector(pos, 1, what)
            try:
                return bytes(self._buf.data[start:start + length]).decode("utf-8")
            except UnicodeDecodeError:
                raise Corrupt(f"{what} at byte {start} is not UTF-8") from None
        if type_name in self._schema.tables:
            return Table(self._schema, type_name, self._buf, self._buf.follow(pos, what))
        raise ValueError(f"unknown type {type_name!r} in table {self._name}")

    @property
    def table_name(self):
        return self._name


class _Vector:
    """A lazy vector: len() is free, elements are read on access (big byte blobs never are)."""

    def __init__(self, table, type_name, at, what):
        self._table, self._type, self._what = table, type_name, what
        self._start, self._len = table._buf.vector(at, self._stride(), what) if at else (0, 0)

    def __len__(self):
        return self._len

    def _stride(self):
        schema = self._table._schema
        if self._type in _SCALARS:
            return _SCALARS[self._type].size
        if self._type in schema.enums:
            return _SCALARS[schema.enums[self._type][0]].size
        return 4  # strings and tables are stored as offsets

    def __getitem__(self, index):
        """Element `index`. Indexes come from the file itself (a method's input is value 7), so one
        out of range, negative ones included, is corruption, not a slice of Python's."""
        if not isinstance(index, int) or not 0 <= index < self._len:
            raise Corrupt(f"index {index} of {self._what}, which has {self._len} elements")
        return self._table._read(self._type, self._start + index * self._stride(), self._what)

    def __iter__(self):
        return (self[i] for i in range(self._len))

    def raw(self):
        """A vector of bytes as bytes (a delegate's payload, a bundled tensor's data)."""
        return bytes(self._table._buf.data[self._start:self._start + self._len * self._stride()])


def _number(token):
    """A default's value: an int, a float, or (an enum member) the name itself."""
    for kind in (int, float):
        try:
            return kind(token)
        except ValueError:
            pass
    return token


def read_root(schema, buf):
    """The root table of `buf`, after checking the schema's file identifier."""
    ident = schema.file_identifier
    if len(buf) < 8:
        raise Corrupt(f"{len(buf)} bytes are too few for a {schema.root_type} flatbuffer")
    if ident and bytes(buf[4:8]) != ident.encode():
        raise Corrupt(f"not a {schema.root_type} flatbuffer: identifier {bytes(buf[4:8])!r}, expected {ident!r}")
    data = _Buffer(buf)
    return Table(schema, schema.root_type, data, data.follow(0, "the root table"))
