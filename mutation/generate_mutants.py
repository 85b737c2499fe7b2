#!/usr/bin/python3
"""Generates every operator mutant of core/ from the C++ AST, as mutant schemata.

    mutation/generate_mutants.py --list              print every mutant
    mutation/generate_mutants.py --out DIR           write the schemata build's sources
    mutation/generate_mutants.py --check             the test command's guard (ctest
                                                     mutant_generator): the list
                                                     regenerates and every mutant applies

The generator parses each core/*.cc and core/*.h with libclang (Debian's
python3-clang-14) and finds the mutation points of docs/mutation.md:

  relational   each of < <= > >= == != replaced by the other five
  arithmetic   + - * / % replaced by the others (% only between integers)
  compound     += -= *= /= %= replaced by the others
  logical      && and || swapped; a `!` removed; a condition negated (where
               negating is not already one of the mutants above)
  literal      an integer literal k becomes k+1 and k-1 (0 becomes 1)
  bool         a bool literal flipped; a returned bool negated
  status       a returned error absl::Status returned as OK
  statement    an expression statement that is a call or an assignment
               removed; `break` and `continue` removed

Arid code is left out: the text of messages (arguments of absl::StrCat,
StrAppend, StrFormat, StrJoin and of absl::*Error(...), functions returning
std::string, std::string variables), compile-time constants (constexpr), and
default member initializers in headers (data that every translation unit,
the oracle's too, must see alike).

Mutant schemata: every point of a file is rewritten into a call of
mutation/schemata/runtime.h, which picks the live mutant at run time from
DCPSCHED_MUTANT, so one build holds them all. A point whose rewrite does not
compile (with g++ and with clang++) is dropped, with the compiler's reason
counted per file, so every mutant listed compiles.

Precompiled headers: the standard library and Abseil headers that core/
includes are precompiled once per run, for libclang by libclang itself (so
always of its version) and for each compiler by that compiler, and every
parse and compile check starts from them: the same AST and the same
compiler reports as without, in a fraction of the time (a core file missing
one of those includes would pass here all the same; the normal build
notices it). One that cannot be built is noted on stderr and its parses or
checks go without it: the same results, slower.

Every mutant has a stable id: a hash of its file, enclosing function,
operator, before and after texts and its ordinal among identical ones, so an
edit elsewhere does not rename it. Its description is
file:line:column, operator, before -> after.
"""

import argparse
import bisect
import concurrent.futures
import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import clang.cindex as ci

LIBCLANG = "/usr/lib/llvm-14/lib/libclang.so.1"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNTIME_INCLUDE = '#include "mutation/schemata/runtime.h"  // mutant schemata build\n'
NS = "::dcpsched_mutation::"

OP_ENUM = {"<": "kLt", "<=": "kLe", ">": "kGt", ">=": "kGe", "==": "kEq", "!=": "kNe",
           "+": "kAdd", "-": "kSub", "*": "kMul", "/": "kDiv", "%": "kMod"}


def runtime_operator_order():
  """The operators in the order of runtime.h's `enum class Op`, which numbers
  each point's replacements at run time: the generator lists them alike."""
  with open(os.path.join(REPO, "mutation", "schemata", "runtime.h")) as f:
    enum = re.search(r"enum class Op \{([^}]*)\}", f.read())
  names = [n.strip() for n in enum.group(1).split(",")]
  by_name = {v: k for k, v in OP_ENUM.items()}
  return [by_name[n] for n in names]


OPERATOR_ORDER = runtime_operator_order()
RELATIONAL = [o for o in OPERATOR_ORDER if o in ("<", "<=", ">", ">=", "==", "!=")]
ARITHMETIC = [o for o in OPERATOR_ORDER if o in ("+", "-", "*", "/", "%")]
COMPOUND = [o + "=" for o in ARITHMETIC]
# Calls whose arguments are message text.
ARID_CALLS = {"StrCat", "StrAppend", "StrFormat", "StrJoin", "Substitute"}
ARID_CALL_SUFFIX = "Error"  # absl::InvalidArgumentError(...) and the like
STATEMENT_PARENTS = {
    ci.CursorKind.COMPOUND_STMT, ci.CursorKind.IF_STMT, ci.CursorKind.WHILE_STMT,
    ci.CursorKind.CXX_FOR_RANGE_STMT, ci.CursorKind.DO_STMT, ci.CursorKind.CASE_STMT,
    ci.CursorKind.DEFAULT_STMT, ci.CursorKind.FOR_STMT}
FUNCTIONS = {ci.CursorKind.FUNCTION_DECL, ci.CursorKind.CXX_METHOD, ci.CursorKind.CONSTRUCTOR,
             ci.CursorKind.DESTRUCTOR, ci.CursorKind.FUNCTION_TEMPLATE,
             ci.CursorKind.CONVERSION_FUNCTION}
INTEGER_KINDS = {ci.TypeKind.BOOL, ci.TypeKind.CHAR_S, ci.TypeKind.CHAR_U, ci.TypeKind.SCHAR,
                 ci.TypeKind.UCHAR, ci.TypeKind.SHORT, ci.TypeKind.USHORT, ci.TypeKind.INT,
                 ci.TypeKind.UINT, ci.TypeKind.LONG, ci.TypeKind.ULONG, ci.TypeKind.LONGLONG,
                 ci.TypeKind.ULONGLONG}
FLOAT_KINDS = {ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.LONGDOUBLE}
FOR_SERIALIZATION = 0x10  # CXTranslationUnit_ForSerialization, unnamed in clang.cindex


@dataclasses.dataclass
class Mutant:
  """One mutant: a single change at one point of one core file."""
  id: str
  file: str
  line: int
  column: int
  operator: str
  before: str
  after: str
  number: int = -1  # its index in this build's table (DCPSCHED_MUTANT picks by id)

  def description(self):
    return f"{self.file}:{self.line}:{self.column}: {self.operator}: {self.before} -> {self.after}"


@dataclasses.dataclass
class Layer:
  """One rewrite at a point: `kind` names how it renders (see Renderer)."""
  kind: str
  mutants: list
  data: dict


@dataclasses.dataclass
class Point:
  """A source range [start, end) with the rewrites stacked on it, innermost first."""
  start: int
  end: int
  layers: list
  operands: list = dataclasses.field(default_factory=list)  # (start, end) ranges


def squeeze(text, limit=100):
  text = re.sub(r"\s+", " ", text).strip()
  return text if len(text) <= limit else text[:limit - 3] + "..."


def literal_value(spelling):
  """The value of an integer literal token, or None (e.g. a char literal)."""
  text = spelling.replace("'", "").lower().rstrip("ul")
  try:
    return int(text, 0)
  except ValueError:
    return None


def unwrap(cursor):
  """The cursor under implicit wrappers (UNEXPOSED_EXPR of the same extent)."""
  while cursor.kind == ci.CursorKind.UNEXPOSED_EXPR:
    children = list(cursor.get_children())
    if len(children) != 1:
      break
    cursor = children[0]
  return cursor


class FileMutator:
  """Finds the mutation points of one core file."""

  def __init__(self, index, relative_path, flags):
    self.relative = relative_path
    self.path = os.path.join(REPO, relative_path)
    with open(self.path, "rb") as f:
      self.source = f.read()
    self.is_header = relative_path.endswith(".h")
    self.tu = index.parse(self.path, args=flags)
    errors = [d for d in self.tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
      raise SystemExit(f"generate_mutants: libclang cannot parse {relative_path}: {errors[0]}")
    file_extent = self.tu.get_extent(self.path, (0, len(self.source)))
    self.tokens = [(t.extent.start.offset, t.extent.end.offset, t.spelling)
                   for t in self.tu.get_tokens(extent=file_extent)]
    self.token_starts = [t[0] for t in self.tokens]
    self.points = {}  # (start, end) -> Point
    self.ordinals = {}
    self.names = {}  # file name -> whether it is this file

  # --- helpers -----------------------------------------------------------------
  def text(self, start, end):
    return self.source[start:end].decode()

  def in_file(self, cursor):
    location = cursor.extent.start
    return location.file is not None and self.is_this_file(location.file.name) \
        and cursor.extent.end.offset > cursor.extent.start.offset

  def is_this_file(self, name):
    if name not in self.names:
      self.names[name] = os.path.samefile(name, self.path)
    return self.names[name]

  def token_after(self, offset):
    i = bisect.bisect_left(self.token_starts, offset)
    return self.tokens[i][2] if i < len(self.tokens) else ""

  def token_at_or_after(self, offset):
    i = bisect.bisect_left(self.token_starts, offset)
    return self.tokens[i] if i < len(self.tokens) else None

  def line_column(self, offset):
    line = self.source.count(b"\n", 0, offset) + 1
    column = offset - (self.source.rfind(b"\n", 0, offset) + 1) + 1
    return line, column

  def span(self, cursor):
    return cursor.extent.start.offset, cursor.extent.end.offset

  # --- context -------------------------------------------------------------
  def has_constexpr(self, cursor):
    start, end = self.span(cursor)
    function = cursor.spelling if cursor.kind in FUNCTIONS else None
    for i in range(bisect.bisect_left(self.token_starts, start), len(self.tokens)):
      t_start, _, spelling = self.tokens[i]
      if t_start >= end:
        break
      if spelling in ("=", "{", "(") and function is None:
        break
      if spelling == "constexpr":
        return True
      if spelling == function:
        break
    return False

  def is_arid(self, ancestors):
    for a in ancestors:
      if a.kind == ci.CursorKind.CALL_EXPR and (
          a.spelling in ARID_CALLS or (a.spelling.endswith(ARID_CALL_SUFFIX) and
                                       a.spelling[:1].isupper())):
        return True
      if a.kind in FUNCTIONS and "string" in a.result_type.spelling:
        return True
      if a.kind == ci.CursorKind.VAR_DECL and "string" in a.type.spelling:
        return True
      if a.kind in (ci.CursorKind.VAR_DECL, ci.CursorKind.FIELD_DECL) or a.kind in FUNCTIONS:
        if self.has_constexpr(a):
          return True
      if a.kind in (ci.CursorKind.STATIC_ASSERT, ci.CursorKind.ENUM_DECL,
                    ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER):
        return True
      if self.is_header and a.kind == ci.CursorKind.FIELD_DECL:
        return True
    return False

  def function_name(self, ancestors):
    names = [a.spelling for a in ancestors if a.kind in FUNCTIONS or
             a.kind in (ci.CursorKind.CLASS_DECL, ci.CursorKind.STRUCT_DECL)]
    return "::".join(names) or "<file>"

  # --- points -----------------------------------------------------------------
  def add(self, ancestors, start, end, kind, operator, changes, data, operands=(),
          where=None):
    """Adds a layer with one mutant per (before, after) in `changes`."""
    function = self.function_name(ancestors)
    line, column = self.line_column(where if where is not None else start)
    mutants = []
    for before, after in changes:
      key = (function, operator, before, after)
      ordinal = self.ordinals.get(key, 0)
      self.ordinals[key] = ordinal + 1
      digest = hashlib.sha1("|".join(
          [self.relative, function, operator, before, after, str(ordinal)]).encode()).hexdigest()
      mutants.append(Mutant(id=f"{os.path.basename(self.relative).split('.')[0]}-{digest[:8]}",
                            file=self.relative, line=line, column=column, operator=operator,
                            before=squeeze(before), after=squeeze(after)))
    point = self.points.setdefault((start, end), Point(start, end, []))
    if operands:
      point.operands = list(operands)
    point.layers.append(Layer(kind, mutants, data))

  def binary_operator_token(self, cursor, lhs):
    token = self.token_at_or_after(lhs.extent.end.offset)
    return token[2] if token else ""

  def operand_kind(self, cursor):
    kind = cursor.type.get_canonical().kind
    if kind in INTEGER_KINDS:
      return "integer"
    if kind in FLOAT_KINDS:
      return "float"
    if kind == ci.TypeKind.ENUM:
      return "enum"
    return None

  def visit_binary(self, cursor, ancestors):
    children = list(cursor.get_children())
    if len(children) != 2:
      return
    lhs, rhs = children
    op = self.binary_operator_token(cursor, lhs)
    start, end = self.span(cursor)
    lhs_text, rhs_text = self.text(*self.span(lhs)), self.text(*self.span(rhs))
    kinds = {self.operand_kind(unwrap(lhs)), self.operand_kind(unwrap(rhs))}
    op_offset = self.token_at_or_after(lhs.extent.end.offset)[0]
    if op in RELATIONAL and None not in kinds:
      others = [o for o in RELATIONAL if o != op]
      self.add(ancestors, start, end, "relational", "relational",
               [(f"{lhs_text} {op} {rhs_text}", f"{lhs_text} {o} {rhs_text}") for o in others],
               {"op": op}, [self.span(lhs), self.span(rhs)], where=op_offset)
    elif op in ARITHMETIC and kinds <= {"integer", "float"}:
      integers = kinds == {"integer"}
      others = [o for o in ARITHMETIC if o != op and (integers or o != "%")]
      self.add(ancestors, start, end, "arithmetic", "arithmetic",
               [(f"{lhs_text} {op} {rhs_text}", f"{lhs_text} {o} {rhs_text}") for o in others],
               {"op": op, "integers": integers}, [self.span(lhs), self.span(rhs)],
               where=op_offset)
    elif op in ("&&", "||"):
      other = "||" if op == "&&" else "&&"
      self.add(ancestors, start, end, "logical", "logical",
               [(f"{lhs_text} {op} {rhs_text}", f"{lhs_text} {other} {rhs_text}")],
               {"op": op}, [self.span(lhs), self.span(rhs)], where=op_offset)

  def visit_compound(self, cursor, ancestors):
    children = list(cursor.get_children())
    if len(children) != 2:
      return
    lhs, rhs = children
    op = self.binary_operator_token(cursor, lhs)
    kinds = {self.operand_kind(unwrap(lhs)), self.operand_kind(unwrap(rhs))}
    if op not in COMPOUND or not kinds <= {"integer", "float"}:
      return
    integers = kinds == {"integer"}
    start, end = self.span(cursor)
    lhs_text, rhs_text = self.text(*self.span(lhs)), self.text(*self.span(rhs))
    others = [o for o in COMPOUND if o != op and (integers or o != "%=")]
    self.add(ancestors, start, end, "compound", "compound",
             [(f"{lhs_text} {op} {rhs_text}", f"{lhs_text} {o} {rhs_text}") for o in others],
             {"op": op[:-1], "integers": integers}, [self.span(lhs), self.span(rhs)],
             where=self.token_at_or_after(lhs.extent.end.offset)[0])

  def negation_is_new(self, cursor):
    """Whether negating `cursor` is not already one of its own mutants."""
    core = unwrap(cursor)
    if core.kind == ci.CursorKind.CXX_BOOL_LITERAL_EXPR:
      return False
    if core.kind == ci.CursorKind.UNARY_OPERATOR and self.text(*self.span(core)).startswith("!"):
      return False
    if core.kind == ci.CursorKind.BINARY_OPERATOR:
      children = list(core.get_children())
      if len(children) == 2 and self.binary_operator_token(core, children[0]) in RELATIONAL:
        kinds = {self.operand_kind(unwrap(c)) for c in children}
        if None not in kinds:
          return False
    return True

  def add_negation(self, cursor, ancestors, operator, before_format):
    if not cursor.kind.is_expression() or not self.negation_is_new(cursor):
      return
    start, end = self.span(cursor)
    text = self.text(start, end)
    if any(l.kind == "negate" for l in self.points.get((start, end), Point(0, 0, [])).layers):
      return
    self.add(ancestors, start, end, "negate", operator,
             [(before_format.format(text), before_format.format(f"!({text})"))], {})

  def condition_of(self, cursor):
    """The condition expression of an if/while/do/for/?: statement, or None."""
    children = list(cursor.get_children())
    if cursor.kind == ci.CursorKind.CONDITIONAL_OPERATOR:
      return children[0] if children else None
    if cursor.kind in (ci.CursorKind.IF_STMT, ci.CursorKind.WHILE_STMT, ci.CursorKind.DO_STMT):
      for child in children:
        if child.kind.is_expression() and self.token_after(child.extent.end.offset) == ")":
          return child
      return None
    if cursor.kind == ci.CursorKind.FOR_STMT:
      # The child between the first two top-level semicolons of the header.
      start, _ = self.span(cursor)
      depth, semicolons = 0, []
      for t_start, _, spelling in self.tokens:
        if t_start < start:
          continue
        if spelling == "(":
          depth += 1
        elif spelling == ")":
          depth -= 1
          if depth == 0:
            break
        elif spelling == ";" and depth == 1:
          semicolons.append(t_start)
      if len(semicolons) != 2:
        return None
      for child in children:
        if child.kind.is_expression() and semicolons[0] < child.extent.start.offset \
            and child.extent.end.offset <= semicolons[1]:
          return child
    return None

  def visit_statement_removal(self, cursor, parent, ancestors):
    if not cursor.kind.is_expression() or parent.kind not in STATEMENT_PARENTS:
      return
    if parent.kind == ci.CursorKind.FOR_STMT and list(parent.get_children())[-1] != cursor:
      return
    if self.token_after(cursor.extent.end.offset) != ";":
      return
    core = unwrap(cursor)
    start, end = self.span(cursor)
    text = self.text(start, end)
    if core.kind == ci.CursorKind.CALL_EXPR:
      if core.spelling in ARID_CALLS:
        return
      what = "call removed"
    elif core.kind in (ci.CursorKind.BINARY_OPERATOR, ci.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR):
      children = list(core.get_children())
      if len(children) != 2 or not self.binary_operator_token(core, children[0]).endswith("="):
        return
      what = "assignment removed"
    elif core.kind == ci.CursorKind.UNARY_OPERATOR and ("++" in text or "--" in text):
      what = "assignment removed"
    else:
      return
    self.add(ancestors, start, end, "remove", "statement", [(text + ";", f"/* {what} */;")], {})

  def visit_return(self, cursor, ancestors):
    children = [c for c in cursor.get_children() if c.kind.is_expression()]
    if not children:
      return
    value = children[0]
    start, end = self.span(value)
    text = self.text(start, end)
    value_type = value.type.get_canonical().spelling
    function = next((a for a in reversed(ancestors)
                     if a.kind in FUNCTIONS or a.kind == ci.CursorKind.LAMBDA_EXPR), None)
    if value.type.get_canonical().kind == ci.TypeKind.BOOL:
      if self.negation_is_new(value):
        self.add(ancestors, start, end, "negate", "bool",
                 [(f"return {text}", f"return !({text})")], {})
    elif value_type == "absl::Status" and "OkStatus()" not in text:
      if function is not None and function.kind != ci.CursorKind.LAMBDA_EXPR and \
          function.result_type.get_canonical().spelling != "absl::Status":
        return
      self.add(ancestors, start, end, "status_ok", "status",
               [(f"return {squeeze(text, 60)}", "return absl::OkStatus()")], {})

  def visit(self, cursor, ancestors):
    for child in cursor.get_children():
      if not self.in_file(child):
        continue
      chain = ancestors + [cursor]
      if self.is_arid(chain + [child]):
        continue
      self.visit_one(child, cursor, chain)
      self.visit(child, chain)

  def visit_one(self, cursor, parent, ancestors):
    kind = cursor.kind
    here = ancestors + [cursor]
    if kind == ci.CursorKind.BINARY_OPERATOR:
      self.visit_binary(cursor, here)
    elif kind == ci.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR:
      self.visit_compound(cursor, here)
    elif kind == ci.CursorKind.UNARY_OPERATOR:
      text = self.text(*self.span(cursor))
      if text.startswith("!") and not text.startswith("!="):
        inner = text[1:].lstrip()
        if not any(l.kind == "negate" for l in
                   self.points.get(self.span(cursor), Point(0, 0, [])).layers):
          self.add(here, *self.span(cursor), "negate", "logical", [(text, inner)], {})
    elif kind == ci.CursorKind.INTEGER_LITERAL:
      tokens = list(cursor.get_tokens())
      value = literal_value(tokens[0].spelling) if len(tokens) == 1 else None
      if value is not None:
        spelled = tokens[0].spelling
        changes = [(spelled, str(value + 1))] + ([(spelled, str(value - 1))] if value else [])
        self.add(here, *self.span(cursor), "literal", "literal", changes, {})
    elif kind == ci.CursorKind.CXX_BOOL_LITERAL_EXPR:
      text = self.text(*self.span(cursor))
      self.add(here, *self.span(cursor), "negate", "bool",
               [(text, "false" if text == "true" else "true")], {})
    elif kind in (ci.CursorKind.BREAK_STMT, ci.CursorKind.CONTINUE_STMT):
      text = self.text(*self.span(cursor))
      self.add(here, *self.span(cursor), "skip", "statement", [(f"{text};", f"/* {text} removed */;")],
               {"statement": text})
    elif kind == ci.CursorKind.RETURN_STMT:
      self.visit_return(cursor, here)
    if kind in (ci.CursorKind.IF_STMT, ci.CursorKind.WHILE_STMT, ci.CursorKind.DO_STMT,
                ci.CursorKind.FOR_STMT, ci.CursorKind.CONDITIONAL_OPERATOR):
      condition = self.condition_of(cursor)
      if condition is not None and self.in_file(condition) and not self.is_arid(here + [condition]):
        keyword = {ci.CursorKind.IF_STMT: "if", ci.CursorKind.WHILE_STMT: "while",
                   ci.CursorKind.DO_STMT: "while", ci.CursorKind.FOR_STMT: "for"}.get(kind)
        self.add_negation(condition, here + [condition], "logical",
                          f"{keyword} ({{}})" if keyword else "{} ? ...")
    self.visit_statement_removal(cursor, parent, here)

  def find_points(self):
    self.visit(self.tu.cursor, [])
    # Layers at one range render innermost first: the operator, then a
    # negation, then removal of the whole statement.
    order = {"relational": 0, "arithmetic": 0, "compound": 0, "logical": 0, "literal": 0,
             "negate": 1, "status_ok": 1, "skip": 2, "remove": 2}
    for point in self.points.values():
      point.layers.sort(key=lambda l: order[l.kind])
      firsts = [l for l in point.layers if order[l.kind] == 0]
      if len(firsts) > 1:  # two operator rewrites of one range: keep the first
        point.layers = [point.layers[0]] + [l for l in point.layers[1:] if order[l.kind] != 0]
    return sorted(self.points.values(), key=lambda p: (p.start, -p.end))


# Rewrites that wrap the rendering of the layer below: (prefix, suffix).
WRAPPERS = {
    "literal": ("{ns}Literal({first}, {count}, ", ")"),
    "negate": ("{ns}Negated({first}, static_cast<bool>(", "))"),
    "status_ok": ("({ns}IsActive({first}) ? ::absl::OkStatus() : ::absl::Status(", "))"),
    "remove": ("({ns}IsActive({first}) ? void() : void(", "))"),
}


class Renderer:
  """Writes a file with every point rewritten into schemata calls.

  Records, for each point, the spans of the output it wrote, so a compiler
  error in the output can be traced back to its point.
  """

  def __init__(self, source, points):
    self.source = source
    self.points = [p for p in points if p.layers]
    self.out = []
    self.length = 0
    self.spans = []  # (out_start, out_end, point)

  def write(self, text):
    self.out.append(text)
    self.length += len(text.encode())

  def inside(self, start, end, exclude=None):
    """The outermost points within [start, end), in order."""
    result, last_end = [], -1
    for p in self.points:
      if p is exclude or p.start < start or p.end > end or p.start < last_end:
        continue
      if (p.start, p.end) == (start, end) and exclude is not None:
        continue
      result.append(p)
      last_end = p.end
    return result

  def range(self, start, end, exclude=None):
    position = start
    for p in self.inside(start, end, exclude):
      self.write(self.source[position:p.start].decode())
      self.point(p)
      position = p.end
    self.write(self.source[position:end].decode())

  def point(self, p):
    begin = self.length
    self.layer(p, len(p.layers) - 1)
    self.spans.append((begin, self.length, p))

  def layer(self, p, i):
    if i < 0:
      self.range(p.start, p.end, exclude=p)
      return
    layer = p.layers[i]
    first = layer.mutants[0].number
    kind = layer.kind
    if kind in ("relational", "arithmetic", "compound"):
      (ls, le), (rs, re_) = p.operands
      function = {"relational": "Relational", "arithmetic": "Arithmetic",
                  "compound": "Compound"}[kind]
      template = "" if kind == "relational" else \
          f"<{'true' if layer.data['integers'] else 'false'}>"
      self.write(f"{NS}{function}{template}({NS}Op::{OP_ENUM[layer.data['op']]}, {first}, ")
      self.range(ls, le)
      self.write(", ")
      self.range(rs, re_)
      self.write(")")
    elif kind == "logical":
      (ls, le), (rs, re_) = p.operands
      other = "||" if layer.data["op"] == "&&" else "&&"
      for op, prefix in ((other, f"({NS}IsActive({first}) ? (("), (layer.data["op"], " : ((")):
        self.write(prefix)
        self.range(ls, le)
        self.write(f") {op} (")
        self.range(rs, re_)
        self.write("))")
      self.write(")")
    elif kind in WRAPPERS:
      prefix, suffix = WRAPPERS[kind]
      self.write(prefix.format(ns=NS, first=first, count=len(layer.mutants)))
      self.layer(p, i - 1)
      self.write(suffix)
    elif kind == "skip":
      self.write(f"if ({NS}IsActive({first})) {{}} else ")
      self.layer(p, i - 1)
    else:
      raise AssertionError(kind)

  def render(self):
    self.write(RUNTIME_INCLUDE)
    self.range(0, len(self.source))
    return "".join(self.out)


def core_files():
  names = sorted(f for f in os.listdir(os.path.join(REPO, "core")) if f.endswith((".cc", ".h")))
  return [f"core/{n}" for n in names]


def number_mutants(files):
  number = 0
  for _, points in files:
    for p in points:
      for layer in p.layers:
        for m in layer.mutants:
          m.number = number
          number += 1


def write_if_changed(path, text):
  """Writes `text` unless the file holds it already, so builds stay warm."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  if os.path.exists(path):
    with open(path) as f:
      if f.read() == text:
        return
  with open(path, "w") as f:
    f.write(text)


def render_all(files, out_dir):
  rendered = {}
  for mutator, points in files:
    renderer = Renderer(mutator.source, points)
    text = renderer.render()
    write_if_changed(os.path.join(out_dir, mutator.relative), text)
    rendered[mutator.relative] = (renderer, text)
  return rendered


ERROR_LOCATION = re.compile(r"^(?:In file included from )?([^\s:]+):(\d+):(\d+):", re.M)


def compile_errors(compiler, out_dir, relative, prefix):
  """The (file, line, column) locations a compiler reports for one file,
  compiled after `prefix` (the flags of compiler_pch)."""
  path = os.path.join(out_dir, relative)
  command = [compiler, "-std=c++20", "-fsyntax-only", "-w", f"-I{out_dir}", f"-I{REPO}",
             *prefix, path]
  if relative.endswith(".h"):
    command[1:1] = ["-x", "c++"]
  if os.path.basename(compiler).startswith("g++"):
    command.insert(1, "-fdiagnostics-column-unit=byte")
  result = subprocess.run(command, capture_output=True, text=True)
  if result.returncode == 0:
    return []
  locations = []
  for match in ERROR_LOCATION.finditer(result.stderr):
    file = os.path.relpath(os.path.realpath(match.group(1)), os.path.realpath(out_dir))
    if file.startswith("core/"):
      locations.append((file, int(match.group(2)), int(match.group(3))))
  if not locations:
    raise SystemExit(f"generate_mutants: {compiler} fails on {relative} outside any point:\n"
                     + result.stderr[:3000])
  return locations


def offending_points(rendered, locations):
  found = set()
  for file, line, column in locations:
    if file not in rendered:
      continue
    renderer, text = rendered[file]
    data = text.encode()
    offset = 0
    for _ in range(line - 1):
      offset = data.index(b"\n", offset) + 1
    offset += column - 1
    containing = [s for s in renderer.spans if s[0] <= offset < s[1]]
    if containing:
      found.add(id(min(containing, key=lambda s: s[1] - s[0])[2]))
  return found


def common_includes():
  """Every #include of core/ that names no core file (the standard library
  and Abseil), one per line, in one order: the prefix that is precompiled for
  every parse and compile check. Core headers stay out of it, since the
  checks compile their rewritten copies."""
  includes = set()
  for relative in core_files():
    with open(os.path.join(REPO, relative)) as f:
      includes.update(re.findall(r'^#include\s+[<"](?!core/)[^>"]+[>"]', f.read(), re.M))
  return "".join(f"{i}\n" for i in sorted(includes))


def write_header(directory, text):
  os.makedirs(directory)
  path = os.path.join(directory, "common.h")
  with open(path, "w") as f:
    f.write(text)
  return path


def note_no_pch(what, reason):
  print(f"generate_mutants: {what} cannot precompile the common includes, so goes without "
        f"(the same results, slower): {str(reason).strip()[:500]}", file=sys.stderr)


def libclang_pch(index, directory, includes):
  """Precompiles `includes` with libclang itself, so the PCH is always of the
  parser's version; returns the parse flags that use it, or [] if it fails."""
  header = write_header(directory, includes)
  flags = ["-std=c++20", "-x", "c++-header", f"-I{REPO}", "-fpch-instantiate-templates"]
  options = ci.TranslationUnit.PARSE_INCOMPLETE | FOR_SERIALIZATION
  try:
    tu = index.parse(header, args=flags, options=options)
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if not errors:
      tu.save(header + ".pch")
      return ["-include-pch", header + ".pch"]
    reason = errors[0]
  except (ci.TranslationUnitLoadError, ci.TranslationUnitSaveError) as e:
    reason = e
  note_no_pch("libclang", reason)
  return []


def compiler_pch(compiler, directory, includes):
  """Precompiles `includes` with `compiler` into DIR/common.h.gch, which g++
  and clang++ both use for `-include DIR/common.h`; returns the compile
  flags that use it, or [] if it fails."""
  header = write_header(directory, includes)
  command = [compiler, "-std=c++20", "-w", "-x", "c++-header", f"-I{REPO}", header,
             "-o", header + ".gch"]
  if "clang" in os.path.basename(compiler):  # else every check instantiates them anew
    command.insert(1, "-fpch-instantiate-templates")
  try:
    result = subprocess.run(command, capture_output=True, text=True)
  except OSError as e:
    result = subprocess.CompletedProcess(command, 1, stderr=str(e))
  if result.returncode != 0:
    note_no_pch(compiler, result.stderr)
    return []
  return ["-include", header]


def parse_all(work, includes):
  """Every core file's mutator and points, parsed on the precompiled prefix."""
  ci.Config.set_library_file(LIBCLANG)
  index = ci.Index.create()
  pch = libclang_pch(index, os.path.join(work, "pch", "libclang"), includes)
  flags = ["-std=c++20", "-x", "c++", f"-I{REPO}"] + pch
  files = []
  for relative in core_files():
    mutator = FileMutator(index, relative, flags)
    files.append((mutator, mutator.find_points()))
  return files


def drop_not_compiling(files, compilers, prefixes, work):
  """Renders the schemata into `work` and compile-checks them, dropping every
  point a compiler reports, until all compile; returns (files, dropped)."""
  dropped = {}
  to_check = {m.relative for m, _ in files}
  for _ in range(30):
    files = [(m, [p for p in points if p.layers]) for m, points in files]
    number_mutants(files)
    rendered = render_all(files, work)
    bad = set()
    for compiler in compilers:
      with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        check = lambda r: compile_errors(compiler, work, r, prefixes[compiler])
        for locations in pool.map(check, sorted(to_check)):
          bad |= offending_points(rendered, locations)
      if bad:
        break
    if not bad:
      return files, dropped
    to_check = set()
    for mutator, points in files:
      for p in points:
        if id(p) in bad:
          count = sum(len(l.mutants) for l in p.layers)
          dropped[mutator.relative] = dropped.get(mutator.relative, 0) + count
          p.layers = []
          to_check.add(mutator.relative)
    if any(f.endswith(".h") for f in to_check):
      to_check = {m.relative for m, _ in files}
  raise SystemExit("generate_mutants: schemata still do not compile after 30 rounds")


def generate(out_dir, compilers):
  """Finds, renders and compile-checks every mutant; returns (files, dropped).

  The compile checks run in a scratch directory; only the final sources reach
  `out_dir`, and only where they changed, so a warm build stays warm.
  """
  work = tempfile.mkdtemp(prefix="dcpsched-schemata-check-")
  try:
    includes = common_includes()
    with concurrent.futures.ThreadPoolExecutor() as pool:  # the PCHs build while libclang parses
      pchs = {c: pool.submit(compiler_pch, c, os.path.join(work, "pch", str(i)), includes)
              for i, c in enumerate(compilers)}
      files = parse_all(work, includes)
      prefixes = {c: pch.result() for c, pch in pchs.items()}
    files, dropped = drop_not_compiling(files, compilers, prefixes, work)
  finally:
    shutil.rmtree(work, ignore_errors=True)
  render_all([(m, points) for m, points in files if any(p.layers for p in points)], out_dir)
  return files, dropped


def all_mutants(files):
  return [m for _, points in files for p in points for l in p.layers for m in l.mutants]


def write_outputs(files, dropped, out_dir):
  mutants = all_mutants(files)
  table = ["// Generated by mutation/generate_mutants.py: mutant number -> stable id.",
           "extern const char* const kDcpschedMutantIds[] = {"]
  table += [f'    "{m.id}",' for m in mutants]
  table += ["    nullptr};", f"extern const int kDcpschedMutantCount = {len(mutants)};", ""]
  write_if_changed(os.path.join(out_dir, "mutant_table.cc"), "\n".join(table))
  with open(os.path.join(out_dir, "mutants.json"), "w") as f:
    json.dump({"mutants": [dataclasses.asdict(m) | {"description": m.description()}
                           for m in mutants],
               "dropped_not_compiling": dropped,
               "files": [m.relative for m, _ in files]}, f, indent=1)
  for mutator, points in files:  # files without a point: no schemata copy
    stale = os.path.join(out_dir, mutator.relative)
    if not any(p.layers for p in points) and os.path.exists(stale):
      os.remove(stale)


def check(files, dropped):
  """The guard's findings: duplicate ids, core files without mutants, rot."""
  mutants = all_mutants(files)
  problems = []
  ids = [m.id for m in mutants]
  if len(set(ids)) != len(ids):
    problems.append("two mutants share an id")
  covered = {m.file for m in mutants}
  for relative in core_files():
    if relative.endswith(".cc") and relative not in covered:
      problems.append(f"{relative}: no mutant generated")
  lost = sum(dropped.values())
  # A few points whose rewrite cannot compile are expected (a literal that
  # must be a constant); many mean the rewriting no longer fits the code.
  if lost > 0.02 * (len(mutants) + lost):
    problems.append(f"{lost} mutants dropped because their schemata do not compile "
                    f"(more than 2%); the rewriting no longer fits the code")
  return problems


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--out", help="write the schemata sources here")
  parser.add_argument("--list", action="store_true", help="print every mutant")
  parser.add_argument("--json", action="store_true", help="with --list: as JSON")
  parser.add_argument("--check", action="store_true", help="the test command's guard")
  parser.add_argument("--compilers", default="g++,clang++-14",
                      help="compilers every schemata file must pass (default g++,clang++-14)")
  args = parser.parse_args()
  out_dir = args.out or tempfile.mkdtemp(prefix="dcpsched-schemata-")
  files, dropped = generate(os.path.abspath(out_dir), args.compilers.split(","))
  write_outputs(files, dropped, out_dir)
  mutants = all_mutants(files)
  if args.list:
    if args.json:
      json.dump([dataclasses.asdict(m) for m in mutants], sys.stdout, indent=1)
    else:
      for m in mutants:
        print(f"{m.id}  {m.description()}")
  if args.check:
    problems = check(files, dropped)
    for p in problems:
      print(f"FAIL {p}")
    per_file = {}
    for m in mutants:
      per_file[m.file] = per_file.get(m.file, 0) + 1
    for f, n in sorted(per_file.items()):
      print(f"ok   {f}: {n} mutants ({dropped.get(f, 0)} mutants dropped: did not compile)")
    print(f"{len(mutants)} mutants in {len(per_file)} files; schemata compile with "
          f"{args.compilers}")
    return 1 if problems else 0
  print(f"generate_mutants: {len(mutants)} mutants, schemata in {out_dir}", file=sys.stderr)
  return 0


if __name__ == "__main__":
  sys.exit(main())
