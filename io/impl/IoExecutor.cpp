#include "halo3d/io/impl/IoExecutor.hpp"

#include <mpi.h>

namespace halo3d::impl {

IoExecutor& IoExecutor::instance() {
  static IoExecutor executor;
  return executor;
}

IoExecutor::IoExecutor() {
  int initialized = 0, provided = MPI_THREAD_SINGLE;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Query_thread(&provided);
  _threaded = provided >= MPI_THREAD_MULTIPLE;
  if (_threaded) _thread = std::thread([this] { loop(); });
}

IoExecutor::~IoExecutor() {
  if (!_threaded) return;
  {
    std::lock_guard<std::mutex> lock(_mutex);
    _stop = true;
  }
  _wake.notify_one();
  _thread.join();
}

std::future<void> IoExecutor::submit(std::function<void()> work) {
  std::packaged_task<void()> task(std::move(work));
  std::future<void> done = task.get_future();
  if (!_threaded) {
    task();
    return done;
  }
  {
    std::lock_guard<std::mutex> lock(_mutex);
    _queue.push_back(std::move(task));
  }
  _wake.notify_one();
  return done;
}

void IoExecutor::loop() {
  for (;;) {
    std::packaged_task<void()> task;
    {
      std::unique_lock<std::mutex> lock(_mutex);
      _wake.wait(lock, [this] { return _stop || !_queue.empty(); });
      if (_queue.empty()) return;
      task = std::move(_queue.front());
      _queue.pop_front();
    }
    task();
  }
}

}  // namespace halo3d::impl
