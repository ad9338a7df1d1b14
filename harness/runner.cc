#include "harness/runner.h"

#include "harness/ordered.h"
#include "harness/regression.h"

namespace gscheck::harness {

Runner::Runner(CaseChecker& checker, ResultSink& sink, RunnerOptions opts)
    : checker_(checker),
      sink_(sink),
      opts_(std::move(opts)),
      t0_(std::chrono::steady_clock::now()),
      guard_(opts_.case_timeout_s,
             [this](const std::string& reason, const InFlightCase* in_flight, int status) {
               return on_stop(reason, in_flight, status);
             }) {}

double Runner::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

int Runner::on_stop(const std::string& reason, const InFlightCase* in_flight, int status) {
  if (in_flight && status == 1) {  // the case over its time limit: FAILED
    reports::CaseResult r;
    r.name = in_flight->name;
    r.file = in_flight->file;
    r.backend = opts_.backend_name;
    r.repro = in_flight->repro;
    r.outcome = "not finished";
    r.reason = reason;
    r.verdict = reports::Verdict::kFailed;
    sink_.add(r);
  }
  return sink_.stop(reason, elapsed_s(), status);
}

std::vector<std::string> Runner::shard_files(std::vector<std::string> files,
                                             const std::optional<reports::Shard>& shard) {
  if (!shard) return files;
  std::vector<std::string> mine;
  for (std::size_t i = 0; i < files.size(); ++i)
    if (in_shard(static_cast<int64_t>(i), shard)) mine.push_back(files[i]);
  return mine;
}

bool Runner::in_shard(int64_t position, const std::optional<reports::Shard>& shard) {
  return !shard || position % shard->count == shard->index - 1;
}

int64_t Runner::shard_positions(int64_t count, const std::optional<reports::Shard>& shard) {
  if (!shard) return count;
  return count / shard->count + (count % shard->count >= shard->index ? 1 : 0);
}

void Runner::check_in_order(std::size_t n,
                            const std::function<reports::CaseResult(std::size_t)>& check,
                            const std::function<InFlightCase(std::size_t)>& in_flight,
                            const std::function<void(std::size_t)>& recorded) {
  if (n == 0) return;
  std::size_t waiting = 0;
  guard_.case_started(in_flight(0));
  for_each_ordered<reports::CaseResult>(n, opts_.jobs, check, [&](reports::CaseResult&& r) {
    guard_.case_finished();
    sink_.add(r);
    if (recorded) recorded(waiting);
    if (++waiting < n) guard_.case_started(in_flight(waiting));
  });
}

void Runner::run_files(const std::vector<std::string>& files) {
  check_in_order(
      files.size(), [&](std::size_t i) { return checker_.check_file(files[i]); },
      [&](std::size_t i) {
        return InFlightCase{files[i], files[i], replay_command(opts_.backend_name, files[i])};
      },
      nullptr);
}

Runner::SweepEnd Runner::run_sweep(CaseSource& source, int64_t count,
                                   std::optional<double> time_budget_s,
                                   const std::function<std::string(int64_t)>& repro_of) {
  // Drawn in batches of `jobs` cases under a time budget (checked before each batch, so a run
  // overshoots it by at most one case per job: the sweep's cases take milliseconds), else of
  // 1024 (the memory of a long sweep stays bounded).
  const double start = elapsed_s();
  const std::size_t batch_cases = time_budget_s ? static_cast<std::size_t>(opts_.jobs) : 1024;
  const std::string& unsaved_repro = checker_.options().sweep_repro;
  std::vector<std::pair<int64_t, CaseFile>> batch;  // (sweep position, case)
  auto check_batch = [&] {
    check_in_order(
        batch.size(),
        [&](std::size_t i) {
          reports::CaseResult r = checker_.check_case(batch[i].second, "");
          if (r.repro == unsaved_repro) r.repro = repro_of(batch[i].first);
          return r;
        },
        [&](std::size_t i) {
          return InFlightCase{batch[i].second.c.name, "", repro_of(batch[i].first)};
        },
        // A run stopped by a signal reports the positions it has results for.
        [&](std::size_t i) { sink_.sweep_reached(batch[i].first + 1, elapsed_s() - start); });
    batch.clear();
  };
  const auto& shard = opts_.shard;
  while (source.position() < count && !(time_budget_s && elapsed_s() - start >= *time_budget_s)) {
    if (!in_shard(source.position(), shard)) {
      source.skip();
      continue;
    }
    const int64_t position = source.position();
    std::optional<Case> c = source.next();
    if (!c) continue;
    CaseFile f;
    f.c = std::move(*c);
    batch.emplace_back(position, std::move(f));
    if (batch.size() < batch_cases) continue;
    check_batch();
  }
  check_batch();
  SweepEnd end{source.position(), elapsed_s() - start};
  sink_.sweep_reached(end.reached, end.elapsed_s);
  return end;
}

}  // namespace gscheck::harness
