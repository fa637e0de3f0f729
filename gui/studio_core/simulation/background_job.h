#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent/QtConcurrentRun>
#include <utility>

namespace pipewright::gui {

// Runs `work` on the thread pool and hands its result to `done` on `owner`'s
// thread. The watcher is a child of `owner`, so a job superseded by a newer
// one is still owned while it finishes and is deleted right after its `done`
// (or with `owner`). `work` runs while `owner` moves on, so it takes copies
// of what it reads; it may post to `owner` if `owner`'s destructor waits for it
// (abandonBackgroundJobs).
template <typename Result, typename Work, typename Done>
QFutureWatcher<Result>* runInBackground(QObject* owner, Work&& work, Done&& done) {
    auto* watcher = new QFutureWatcher<Result>(owner);
    QObject::connect(watcher, &QFutureWatcherBase::finished, owner,
                     [watcher, done = std::forward<Done>(done)]() mutable {
                         done(watcher->result());
                         watcher->deleteLater();
                     });
    watcher->setFuture(QtConcurrent::run(std::forward<Work>(work)));
    return watcher;
}

// For an owner's destructor: drops the results of the jobs still running and
// waits for them, so that no worker outlives the application's data on exit.
inline void abandonBackgroundJobs(QObject* owner) {
    for (auto* watcher : owner->findChildren<QFutureWatcherBase*>(Qt::FindDirectChildrenOnly)) {
        watcher->disconnect();
        watcher->waitForFinished();
    }
}

}  // namespace pipewright::gui
