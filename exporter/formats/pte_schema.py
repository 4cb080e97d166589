"""Reads a FlatBuffers binary through its .fbs schema, with the `flatbuffers` package only.

ExecuTorch ships program.fbs (and scalar_type.fbs) inside its wheel. Its generated Python
classes are private (exir._serialize.generated), import all of torch, and in executorch 1.4.1
some accessors are broken (they call a module instead of a class). flatc is not installable
at build time. So this module parses the installed schema itself and reads fields by their
vtable slot: the schema is the single source of truth, and nothing here knows a field offset.

Supported: tables, enums, unions, vectors, strings and scalars, which is all program.fbs uses.
"""

import importlib.util
import os
import re

import flatbuffers
from flatbuffers import number_types as N

_SCALARS = {
    "bool": N.BoolFlags, "byte": N.Int8Flags, "ubyte": N.Uint8Flags, "int8": N.Int8Flags,
    "uint8": N.Uint8Flags, "short": N.Int16Flags, "ushort": N.Uint16Flags,
    "int16": N.Int16Flags, "uint16": N.Uint16Flags, "int": N.Int32Flags, "uint": N.Uint32Flags,
    "int32": N.Int32Flags, "uint32": N.Uint32Flags, "long": N.Int64Flags,
    "ulong": N.Uint64Flags, "int64": N.Int64Flags, "uint64": N.Uint64Flags,
    "float": N.Float32Flags, "double": N.Float64Flags, "float32": N.Float32Flags,
    "float64": N.Float64Flags,
}
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


class Table:
    """One table of a buffer; read fields as attributes: `program.execution_plan[0].name`."""

    __slots__ = ("_schema", "_name", "_tab")

    def __init__(self, schema, name, buf, pos):
        self._schema, self._name = schema, name
        self._tab = flatbuffers.table.Table(buf, pos)

    def __getattr__(self, field):
        try:
            slot, (kind, type_name) = self._schema.tables[self._name][field]
        except KeyError:
            raise AttributeError(f"table {self._name} has no field {field!r}") from None
        offset = self._tab.Offset(4 + 2 * slot)
        if kind == "vector":
            return _Vector(self, type_name, offset)
        if type_name in self._schema.unions:
            tag = self._tab.Get(N.Uint8Flags, self._tab.Pos + offset) if offset else 0
            member = self._schema.unions[type_name].get(tag)
            value_offset = self._tab.Offset(4 + 2 * (slot + 1))
            if member is None or not value_offset:
                return None
            return self._read(member, self._tab.Pos + value_offset)
        if not offset:
            return self._default(type_name, field)
        return self._read(type_name, self._tab.Pos + offset)

    def _default(self, type_name, field=None):
        declared = self._schema.defaults.get((self._name, field))
        if declared is not None:  # etdump's `instruction_id:int = -1`
            return declared
        if type_name in _SCALARS or type_name in self._schema.enums:
            return self._enum_name(type_name, 0) if type_name in self._schema.enums else 0
        return None

    def _enum_name(self, type_name, raw):
        return self._schema.enums[type_name][1].get(raw, raw)

    def _read(self, type_name, pos):
        """The value of type `type_name` stored at absolute position `pos` of the buffer."""
        if type_name in _SCALARS:
            return self._tab.Get(_SCALARS[type_name], pos)
        if type_name in self._schema.enums:
            underlying = self._schema.enums[type_name][0]
            return self._enum_name(type_name, self._tab.Get(_SCALARS[underlying], pos))
        if type_name == "string":
            return self._tab.String(pos).decode("utf-8")
        if type_name in self._schema.tables:
            return Table(self._schema, type_name, self._tab.Bytes, self._tab.Indirect(pos))
        raise ValueError(f"unknown type {type_name!r} in table {self._name}")

    @property
    def table_name(self):
        return self._name


class _Vector:
    """A lazy vector: len() is free, elements are read on access (big byte blobs never are)."""

    def __init__(self, table, type_name, offset):
        self._table, self._type = table, type_name
        tab = table._tab
        self._start = tab.Vector(offset) if offset else 0
        self._len = tab.VectorLen(offset) if offset else 0

    def __len__(self):
        return self._len

    def _stride(self):
        if self._type in _SCALARS:
            return _SCALARS[self._type].bytewidth
        if self._type in self._table._schema.enums:
            return _SCALARS[self._table._schema.enums[self._type][0]].bytewidth
        return 4  # strings and tables are stored as offsets

    def __getitem__(self, index):
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError(index)
        return self._table._read(self._type, self._start + index * self._stride())

    def __iter__(self):
        return (self[i] for i in range(self._len))


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
    if ident and bytes(buf[4:8]) != ident.encode():
        raise ValueError(f"not a {schema.root_type} flatbuffer: identifier {bytes(buf[4:8])!r}, expected {ident!r}")
    root = flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0)
    return Table(schema, schema.root_type, buf, root)
