#include "native/supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace et_runner {
namespace {

int report_fd = -1;  // the child's end of the pipe to its supervisor

void send(char tag, const std::string& text) {
  if (report_fd < 0) return;
  std::string line = tag + printable(text) + "\n";  // printable: no newline inside
  for (size_t done = 0; done < line.size();) {
    ssize_t n = write(report_fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += n;
  }
}

size_t utf8_length(const std::string& s, size_t at) {  // a valid sequence's length at `at`, or 0
  unsigned char c = s[at];
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || at + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[at + k]) & 0xc0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string printable(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    unsigned char c = text[i];
    size_t n = c >= 0x80 ? utf8_length(text, i) : (c >= 0x20 && c != 0x7f) ? 1 : 0;
    if (n) {
      out.append(text, i, n), i += n;
    } else {
      char hex[5];
      snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex, ++i;
    }
  }
  return out;
}

void note_step(const std::string& step) { send('S', step); }
void note_error(const std::string& message) { send('E', message); }

namespace {

// Reads the child's reports (steps and errors) until it closes the pipe; false if the deadline
// (a steady-clock time; none when deadline_seconds is 0) passed first.
bool read_reports(int fd, int deadline_seconds, std::string& step, std::string& error) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(deadline_seconds);
  std::string pending;
  char buffer[4096];
  for (;;) {
    int wait_ms = -1;
    if (deadline_seconds > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the deadline, checked above
    ssize_t n = ready < 0 ? -1 : read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    pending.append(buffer, n);
    for (size_t end; (end = pending.find('\n')) != std::string::npos; pending.erase(0, end + 1)) {
      std::string text = pending.substr(1, end - 1);
      if (pending[0] == 'S') step = text;
      else error = text;  // the last one: what the runtime said just before it crashed (an assert's)
    }
  }
}

std::string signal_name(int sig) {
  return sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "SIGABRT" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE"
         : sig == SIGILL ? "SIGILL" : sig == SIGKILL ? "SIGKILL" : "signal " + std::to_string(sig);
}

}  // namespace

int supervise(const std::function<int()>& body, int deadline_seconds, const std::string& program) {
  if (getenv("ET_RUNNER_UNSUPERVISED")) return body();
  int fds[2];
  if (pipe(fds) != 0) return body();
  fflush(stdout), fflush(stderr);
  pid_t supervisor = getpid();
  pid_t child = fork();
  if (child < 0) return close(fds[0]), close(fds[1]), body();
  if (child == 0) {
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);     // never outlive a supervisor that was killed...
    if (getppid() != supervisor) _exit(1);  // ...even one killed between the fork and the prctl
    report_fd = fds[1];
    int status = body();
    fflush(stdout), fflush(stderr);
    _exit(status);  // the supervisor's buffers were flushed before the fork; nothing else to run
  }
  close(fds[1]);
  std::string step = "starting", error;
  bool finished = read_reports(fds[0], deadline_seconds, step, error);
  close(fds[0]);
  if (!finished) kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!finished) {
    fprintf(stderr, "et_runner: %s did not finish within its deadline of %d s (--deadline) and was stopped while %s; "
            "the program may loop or wait forever, or give it a longer --deadline\n",
            printable(program).c_str(), deadline_seconds, step.c_str());
    return 1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::string last = error.empty() ? "" : "; the runtime's last error: " + error;
  fprintf(stderr, "et_runner: the runtime crashed (%s) while %s%s; the file is corrupt or was not made for this "
          "runtime and its libraries\n", signal_name(WIFSIGNALED(status) ? WTERMSIG(status) : 0).c_str(),
          step.c_str(), last.c_str());
  return 1;
}

}  // namespace et_runner
