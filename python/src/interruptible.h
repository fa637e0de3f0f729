#pragma once

// A long computation that Ctrl-C stops: it runs on a thread of its own,
// without the GIL, while the calling thread lets Python run its signal
// handlers every few tens of milliseconds. When one raises (KeyboardInterrupt
// from Python's SIGINT handler), the job is asked to stop through its stop
// token, waited for, and the Python exception is raised.

#include <functional>
#include <stop_token>

namespace pipewright::python {

// Call with the GIL held. Exceptions of the job are rethrown here.
void run_interruptibly(const std::function<void(std::stop_token)>& job);

}  // namespace pipewright::python
