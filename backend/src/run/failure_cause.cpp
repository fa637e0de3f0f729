#include "run/failure_cause.h"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <stdexcept>

#include "run/rendezvous.h"

namespace pipewright::backend {

bool killed_from_outside(int status) {
    return WIFSIGNALED(status) && WTERMSIG(status) != SIGABRT;
}

bool is_consequence(const std::string& reason) {
    std::string text = reason;
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // Gloo's and c10d's words for a peer that went away or went quiet.
    static constexpr std::array<const char*, 7> kPeerGone{"connection closed by peer",
                                                          "connection reset by peer",
                                                          "broken pipe",
                                                          "socket closed",
                                                          "timed out",
                                                          "end of file",
                                                          "lost the rendezvous store"};
    return std::any_of(kPeerGone.begin(), kPeerGone.end(),
                       [&](const char* words) { return text.find(words) != std::string::npos; });
}

namespace {
bool killed_by_signal(const RankFailure& f) {
    return f.status && WIFSIGNALED(*f.status);
}
// Reported ones in the order they were reported.
bool reported_before(const RankFailure* a, const RankFailure* b) {
    return a->order.value_or(INT64_MAX) < b->order.value_or(INT64_MAX);
}
}  // namespace

const RankFailure& first_cause(const std::vector<RankFailure>& failures) {
    if (failures.empty()) {
        throw std::invalid_argument("first_cause: no failure to choose from");
    }
    const RankFailure* own_reason = nullptr;
    const RankFailure* signalled = nullptr;
    const RankFailure* reported = nullptr;
    for (const RankFailure& f : failures) {
        if (f.order && !f.reason.empty() && !is_consequence(f.reason) &&
            (!own_reason || reported_before(&f, own_reason))) {
            own_reason = &f;
        }
        if (killed_by_signal(f) && !signalled) {
            signalled = &f;
        }
        if (f.order && (!reported || reported_before(&f, reported))) {
            reported = &f;
        }
    }
    if (own_reason) {
        return *own_reason;
    }
    if (signalled) {
        return *signalled;
    }
    return reported ? *reported : failures.front();
}

std::vector<RankFailure> collect_failures(c10d::Store& store, int world,
                                          const std::map<int, int>& exited,
                                          const std::function<std::string(int)>& log_reason) {
    std::vector<RankFailure> all;
    for (int r = 0; r < world; ++r) {
        RankFailure f;
        f.rank = r;
        if (const auto it = exited.find(r); it != exited.end()) {
            f.status = it->second;
        }
        if (const auto reason = try_get_text(store, keys::failure(r))) {
            f.reason = reason->substr(0, reason->find('\n'));
            if (const auto order = try_get_text(store, keys::failure_order(r))) {
                try {
                    f.order = std::stoll(*order);
                } catch (const std::exception&) {
                    // not a number: the failure still counts, unordered
                }
            }
        }
        if (!f.status && f.reason.empty()) {
            continue;
        }
        if (f.reason.empty()) {
            f.reason = log_reason(r);
        }
        all.push_back(std::move(f));
    }
    return all;
}

}  // namespace pipewright::backend
