// Run-time switch of a mutant-schemata build (docs/mutation.md).
//
// mutation/generate_mutants.py rewrites every mutation point of core/ into a
// call of one of these functions, so that one instrumented build holds every
// generated mutant. Which one is live is chosen when the program starts:
//
//   DCPSCHED_MUTANT=<stable id>   that mutant (ids: generate_mutants.py --list)
//   unset or empty                none: the build behaves as the original
//   DCPSCHED_MUTANT_REACHED=<dir> also record which mutants' points the run
//                                 evaluates (below: Switch::reached)
//
// An unknown id aborts at the first mutation point reached, with a message,
// so a runner can never score a mutant that is not in the build.
//
// Each function takes the first id of its point's mutants; the k-th mutant
// of a point is `first_id + k`, in the order the generator lists them (the
// replacement operators in the fixed orders kRelational, kArithmetic and
// kCompound below, minus the original). A normal build never includes this
// header: the schemata exist only in the mutation build directory.

#ifndef DCPSCHED_MUTATION_SCHEMATA_RUNTIME_H_
#define DCPSCHED_MUTATION_SCHEMATA_RUNTIME_H_

namespace dcpsched_mutation {

// What the build's environment chose, read once when the first mutation
// point is reached:
//   active    the index of the live mutant in this build's table, or -1 for
//             none (DCPSCHED_MUTANT);
//   reached   null, or, when DCPSCHED_MUTANT_REACHED names a directory, one
//             flag per mutant of the table, set when its point is evaluated.
//             At exit the process writes the ids of the mutants it reached to
//             `<dir>/reached-<pid>.txt` (a child it spawns writes its own).
//
// `reached` is how mutation/run_mutants.py skips a program for a mutant:
// a mutant changes nothing but its own point, so a deterministic program
// that never evaluates that point in the unmutated run behaves the same
// under the mutant and cannot kill it.
struct Switch {
  int active;
  bool* reached;
};
Switch ReadSwitch();

inline const Switch& TheSwitch() {
  static const Switch state = ReadSwitch();
  return state;
}

// Marks the `count` mutants of the point starting at `first_id` reached, when
// the run records that. A flag only ever goes from false to true, so
// concurrent setters agree (relaxed atomic stores).
inline void NoteReached(const Switch& state, int first_id, int count) {
  if (state.reached == nullptr) return;
  for (int k = 0; k < count; ++k) {
    __atomic_store_n(&state.reached[first_id + k], true, __ATOMIC_RELAXED);
  }
}

// How far the live mutant lies past `first_id`: 0..count-1 when one of a
// point's `count` mutants is live, -1 otherwise.
inline int LiveOffset(int first_id, int count) {
  const Switch& state = TheSwitch();
  NoteReached(state, first_id, count);
  const int offset = state.active - first_id;
  return offset >= 0 && offset < count ? offset : -1;
}

inline bool IsActive(int id) {
  const Switch& state = TheSwitch();
  NoteReached(state, id, 1);
  return state.active == id;
}

// Operators in the order the generator numbers their replacements. An
// original's replacements are these minus itself; `%` (and `%=`) only when
// both operands are integers.
enum class Op { kLt, kLe, kGt, kGe, kEq, kNe, kAdd, kSub, kMul, kDiv, kMod };

// The `offset`-th operator of [first, last] other than `original`, skipping
// kMod unless `allow_mod`.
constexpr Op Replacement(Op first, Op last, Op original, int offset, bool allow_mod) {
  for (int op = static_cast<int>(first); op <= static_cast<int>(last); ++op) {
    if (op == static_cast<int>(original)) continue;
    if (!allow_mod && op == static_cast<int>(Op::kMod)) continue;
    if (offset-- == 0) return static_cast<Op>(op);
  }
  return original;
}

template <class A, class B>
bool Relational(Op original, int first_id, const A& a, const B& b) {
  const int offset = LiveOffset(first_id, 5);
  const Op op = offset < 0 ? original : Replacement(Op::kLt, Op::kNe, original, offset, false);
  switch (op) {
    case Op::kLt: return a < b;
    case Op::kLe: return a <= b;
    case Op::kGt: return a > b;
    case Op::kGe: return a >= b;
    case Op::kEq: return a == b;
    default: return a != b;
  }
}

// kIntegers: both operands are integers, so `%` is one of the replacements
// (the generator decides it from the operand types and passes it here).
template <bool kIntegers, class A, class B>
auto Arithmetic(Op original, int first_id, const A& a, const B& b) -> decltype(a + b) {
  const int offset = LiveOffset(first_id, kIntegers ? 4 : 3);
  const Op op = offset < 0 ? original : Replacement(Op::kAdd, Op::kMod, original, offset, kIntegers);
  switch (op) {
    case Op::kAdd: return a + b;
    case Op::kSub: return a - b;
    case Op::kMul: return a * b;
    case Op::kDiv: return a / b;
    default:
      if constexpr (kIntegers) return a % b;
      return a / b;  // never reached: kMod is not offered for floating point
  }
}

template <bool kIntegers, class A, class B>
A& Compound(Op original, int first_id, A& a, const B& b) {
  const int offset = LiveOffset(first_id, kIntegers ? 4 : 3);
  const Op op = offset < 0 ? original : Replacement(Op::kAdd, Op::kMod, original, offset, kIntegers);
  switch (op) {
    case Op::kAdd: return a += b;
    case Op::kSub: return a -= b;
    case Op::kMul: return a *= b;
    case Op::kDiv: return a /= b;
    default:
      if constexpr (kIntegers) return a %= b;
      return a /= b;  // never reached, as above
  }
}

// An integer literal: first_id + 0 is value + 1, first_id + 1 is value - 1.
// A literal 0 has only the first (count 1): 0 -> 1.
template <class T>
T Literal(int first_id, int count, T value) {
  switch (LiveOffset(first_id, count)) {
    case 0: return static_cast<T>(value + 1);
    case 1: return static_cast<T>(value - 1);
    default: return value;
  }
}

// A condition, a bool literal or a returned bool: negated when live.
inline bool Negated(int id, bool value) { return IsActive(id) ? !value : value; }

}  // namespace dcpsched_mutation

#endif  // DCPSCHED_MUTATION_SCHEMATA_RUNTIME_H_
