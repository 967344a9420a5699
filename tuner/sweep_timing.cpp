#include "tuner/sweep_timing.hpp"

namespace tuner {

db::Timing to_db_timing(const Timing& timing) {
  return db::Timing{timing.median_us,
                    timing.p10_us,
                    timing.p90_us,
                    timing.samples,
                    timing.median_us > 0 ? (timing.p90_us - timing.p10_us) / timing.median_us : 0.0,
                    timing.launch_p10_us,
                    timing.launch_p90_us};
}

Timing timing_of(const db::TrialRecord& trial) {
  Timing timing;
  timing.median_us = trial.median_us.value_or(0.0);
  timing.p10_us = trial.p10_us.value_or(0.0);
  timing.p90_us = trial.p90_us.value_or(0.0);
  timing.samples = static_cast<int>(trial.samples.value_or(0));
  timing.launch_p10_us = trial.launch_p10_us.value_or(0.0);
  timing.launch_p90_us = trial.launch_p90_us.value_or(0.0);
  return timing;
}

Timing timing_from_answer(const nlohmann::json& answer) {
  Timing timing;
  timing.median_us = answer.at("median_us").get<double>();
  timing.p10_us = answer.at("p10_us").get<double>();
  timing.p90_us = answer.at("p90_us").get<double>();
  timing.samples = answer.at("samples").get<int>();
  timing.launch_p10_us = answer.value("launch_p10_us", 0.0);
  timing.launch_p90_us = answer.value("launch_p90_us", 0.0);
  return timing;
}

void set_trial_timing(const Timing& timing, db::TrialRecord& trial) {
  trial.median_us = timing.median_us;
  trial.p10_us = timing.p10_us;
  trial.p90_us = timing.p90_us;
  trial.samples = timing.samples;
  trial.rel_spread = to_db_timing(timing).rel_spread;
  if (timing.launch_p10_us > 0.0) trial.launch_p10_us = timing.launch_p10_us;
  if (timing.launch_p90_us > 0.0) trial.launch_p90_us = timing.launch_p90_us;
}

}  // namespace tuner
