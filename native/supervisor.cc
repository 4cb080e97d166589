#include "native/supervisor.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

int supervise(const std::function<int()>& body) {
  if (getenv("ET_RUNNER_UNSUPERVISED")) return body();
  int fds[2];
  if (pipe(fds) != 0) return body();
  fflush(stdout), fflush(stderr);
  pid_t child = fork();
  if (child < 0) return close(fds[0]), close(fds[1]), body();
  if (child == 0) {
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a supervisor that was killed
    report_fd = fds[1];
    int status = body();
    fflush(stdout), fflush(stderr);
    _exit(status);  // the supervisor's buffers were flushed before the fork; nothing else to run
  }
  close(fds[1]);
  std::string step = "starting", error, pending;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    pending.append(buffer, n);
    for (size_t end; (end = pending.find('\n')) != std::string::npos; pending.erase(0, end + 1)) {
      std::string text = pending.substr(1, end - 1);
      if (pending[0] == 'S') step = text;
      else error = text;  // the last one: what the runtime said just before it crashed (an assert's)
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  std::string name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "SIGABRT" : sig == SIGBUS ? "SIGBUS"
                     : sig == SIGFPE ? "SIGFPE" : sig == SIGILL ? "SIGILL" : sig == SIGKILL ? "SIGKILL"
                     : "signal " + std::to_string(sig);
  std::string last = error.empty() ? "" : "; the runtime's last error: " + error;
  fprintf(stderr, "et_runner: the runtime crashed (%s) while %s%s; the file is corrupt or was not made for this "
          "runtime and its libraries\n", name.c_str(), step.c_str(), last.c_str());
  return 1;
}

}  // namespace et_runner
