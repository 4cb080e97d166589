// The runner's last line of defence against files that crash ExecuTorch's runtime.
//
// The runner checks what it reads itself and loads programs with the runtime's full
// verification, but some corrupt programs still crash inside the runtime or a delegate (a
// delegate's payload is opaque to the verifier). supervise() runs the runner in a forked child;
// a child that dies by a signal becomes one line on stderr naming the step it was in (and the
// runtime's last error), and exit status 1, instead of a crash of the runner itself; a child past
// its deadline is killed, and becomes one line too.
#pragma once
#include <functional>
#include <string>

namespace et_runner {

// Runs body in a child process and returns its exit status; a death by a signal is reported
// in one line as "et_runner: the runtime crashed (SIGSEGV) while <step>...". With
// deadline_seconds > 0, a child still running after that long is killed, in one line naming
// program and the limit ("et_runner: m.pte did not finish within its deadline of 60 s..."): a
// program that never returns would otherwise hang its test until Bazel's timeout, unexplained.
// With ET_RUNNER_UNSUPERVISED set, runs body in this process (to debug it, or to count crashes).
int supervise(const std::function<int()>& body, int deadline_seconds = 0, const std::string& program = "");

// What the child tells its supervisor, for that one line: the step it is in now ("loading
// method \"forward\" of m.pte") and each error the runtime logs. No-ops when unsupervised.
void note_step(const std::string& step);
void note_error(const std::string& message);

// text with control characters and bytes that are not UTF-8 written as \xNN: names read from
// a corrupt file must not break the one line in two or garble the terminal.
std::string printable(const std::string& text);

}  // namespace et_runner
