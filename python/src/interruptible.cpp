#include "interruptible.h"

#include <chrono>
#include <exception>
#include <future>
#include <thread>

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace pipewright::python {

void run_interruptibly(const std::function<void(std::stop_token)>& job) {
    std::stop_source stop;
    std::promise<void> done;
    std::future<void> finished = done.get_future();
    std::thread worker([&] {
        try {
            job(stop.get_token());
            done.set_value();
        } catch (...) {
            done.set_exception(std::current_exception());
        }
    });
    bool interrupted = false;
    while (true) {
        bool ready = false;
        {
            py::gil_scoped_release unlocked;
            ready = finished.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready;
        }
        if (ready) {
            break;
        }
        // Runs Python's handlers; only the main thread's call does anything.
        if (PyErr_CheckSignals() != 0) {
            interrupted = true;
            stop.request_stop();
            py::gil_scoped_release unlocked;
            finished.wait();
            break;
        }
    }
    worker.join();
    if (interrupted) {
        // The job's own outcome (a cancellation, a result) gives way to the
        // exception the handler raised.
        throw py::error_already_set();
    }
    finished.get();
}

}  // namespace pipewright::python
