// Report rendering (see report_writer.h). SummaryTables render themselves; the other reports
// (bandwidth, worst instances, slowest links) are Grids that keep a display text and a raw value
// per cell, so text shows readable units while CSV and JSON carry raw numbers.
#include "tools/stats/report_writer.h"

#include "common/hex16.h"
#include "common/summary_table.h"
#include "tools/common/plural.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace katrace::tools {
namespace {

struct Column {
  const char* text;  // header in text tables
  const char* csv;   // header in CSV
  const char* key;   // key in JSON rows
  // A duration in ns: text shows the raw value in the column's one unit, named in the header.
  bool duration = false;
};

struct Grid {
  std::string title;
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> text;
  std::vector<std::vector<Json>> raw;
  bool last_is_text = true;  // a text last column stays left-aligned and unpadded
  std::string meaning{};     // how to read it: under the title in text, one line each ('\n')

  void AddRow(std::vector<std::string> text_cells, std::vector<Json> raw_cells) {
    text.push_back(std::move(text_cells));
    raw.push_back(std::move(raw_cells));
  }
};

std::string Fixed(double value, int precision) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed, precision);
  return std::string(buf, r.ptr);
}

// A cell with no number (JSON null: a bandwidth without a time) is empty, as CSV readers expect.
std::string CsvCell(const Json& value) {
  if (value.is_null()) return "";
  return value.is_string() ? CsvField(value.get<std::string>()) : value.dump();
}

// The grid's meaning, each line after |prefix| (" " under a text title, "# " in CSV).
std::string MeaningLines(const Grid& grid, const char* prefix) {
  std::string out;
  for (size_t at = 0; at < grid.meaning.size();) {
    const size_t end = std::min(grid.meaning.find('\n', at), grid.meaning.size());
    out += prefix + grid.meaning.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return out;
}

// A grid's duration columns (an average beside a median, a delay beside a lead) share one unit,
// so that a row reads across without converting.
std::string GridText(const Grid& grid) {
  std::string out = grid.title + "\n" + MeaningLines(grid, " ");
  if (grid.text.empty()) return out + " (none)\n";
  const size_t n = grid.columns.size();
  auto value = [&](size_t r, size_t c) { return grid.raw[r][c].is_number() ? grid.raw[r][c].get<double>() : 0.0; };
  std::vector<double> durations;
  for (size_t c = 0; c < n; ++c) {
    for (size_t r = 0; grid.columns[c].duration && r < grid.raw.size(); ++r) durations.push_back(value(r, c));
  }
  const DurationUnit unit = UnitForColumn(durations);
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows = grid.text;
  for (size_t c = 0; c < n; ++c) {
    header.push_back(grid.columns[c].text);
    if (!grid.columns[c].duration) continue;
    header[c] += std::string(" (") + unit.name + ")";
    for (size_t r = 0; r < rows.size(); ++r) rows[r][c] = FormatInUnit(value(r, c), unit);
  }
  std::vector<size_t> width(n);
  for (size_t c = 0; c < n; ++c) {
    width[c] = header[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  auto render = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < n; ++c) {
      line += c == 0 ? " " : "  ";
      if (c + 1 < n || !grid.last_is_text) line.append(width[c] - cells[c].size(), ' ');
      line += cells[c];
    }
    return line + "\n";
  };
  std::vector<std::string> rule;
  for (size_t c = 0; c < n; ++c) rule.push_back(std::string(width[c], '-'));
  out += render(header) + render(rule);
  for (const auto& row : rows) out += render(row);
  return out;
}

std::string GridCsv(const Grid& grid) {
  std::string out;
  for (size_t c = 0; c < grid.columns.size(); ++c) {
    out += (c == 0 ? "" : ",") + std::string(grid.columns[c].csv);
  }
  out += "\n";
  for (const auto& row : grid.raw) {
    for (size_t c = 0; c < row.size(); ++c) out += (c == 0 ? "" : ",") + CsvCell(row[c]);
    out += "\n";
  }
  return out;
}

Json GridJson(const Grid& grid) {
  Json rows = Json::array();
  for (const auto& row : grid.raw) {
    Json object = Json::object();
    for (size_t c = 0; c < row.size(); ++c) object[grid.columns[c].key] = row[c];
    rows.push_back(std::move(object));
  }
  return rows;
}

Grid BandwidthGrid(const StatsState& state) {
  Grid grid{"Bandwidth per collective size, as nccl-tests computes it",
            {{"Function", "Function", "func"},
             {"Size", "Size (B)", "bytes"},
             {"Ranks", "Ranks", "nranks"},
             {"Instances", "Instances", "instances"},
             {"Avg", "Avg (ns)", "avg_ns", true},
             {"Med", "Med (ns)", "med_ns", true},
             {"AlgBW (GB/s)", "AlgBW (GB/s)", "algbw_gbps"},
             {"BusBW (GB/s)", "BusBW (GB/s)", "busbw_gbps"}},
            {},
            {},
            false};
  grid.meaning =
      "AlgBW = size / mean GPU time; size = Size, or n x Size where Size is one rank's share (AllGather, ReduceScatter, AlltoAll, Gather, Scatter)\n"
      "BusBW = AlgBW x 2(n-1)/n for AllReduce, x (n-1)/n for those five, x 1 otherwise";
  for (const auto& row : state.bandwidth.Rows(state.comm_sizes)) {
    const std::string ranks = row.nranks > 0 ? std::to_string(row.nranks) : "?";
    grid.AddRow({row.func, SizeText(row.bytes), ranks, std::to_string(row.time.count()),
                 "", "",
                 row.has_algbw ? Fixed(row.algbw_gbps, 2) : "n/a",
                 row.has_busbw ? Fixed(row.busbw_gbps, 2) : "n/a"},
                {row.func, row.bytes, row.nranks, row.time.count(),
                 std::round(row.time.mean_ns() * 10) / 10, std::round(row.time.median_ns() * 10) / 10,
                 row.has_algbw ? Json(std::round(row.algbw_gbps * 1000) / 1000) : Json(),
                 row.has_busbw ? Json(std::round(row.busbw_gbps * 1000) / 1000) : Json()});
  }
  return grid;
}

Grid WorstGrid(const StatsState& state, size_t top_n) {
  Grid grid{"Worst collective instances (top " + std::to_string(top_n) +
                " by delay = last arrival - first arrival)",
            {{"Comm", "Comm", "comm"},
             {"Function", "Function", "func"},
             {"Seq", "Seq", "seq"},
             {"Ranks", "Ranks", "ranks"},
             {"Delay", "Delay (ns)", "delay_ns", true},
             {"Lead over next", "Lead over next (ns)", "lead_ns", true},
             {"First", "First", "first"},
             {"Next", "Next", "next"},
             {"Last", "Last", "last"}},
            {},
            {}};
  for (const auto& w : state.stragglers.worst) {
    grid.AddRow({Hex16(w.comm), w.func, std::to_string(w.seq), std::to_string(w.participants),
                 "", "", w.first, w.next, w.last},
                {Hex16(w.comm), w.func, w.seq, w.participants, w.delay_ns, w.lead_ns, w.first,
                 w.next, w.last});
  }
  return grid;
}

Grid LinkGrid(const std::vector<SlowLinks::Finding>& findings, bool channels) {
  Grid grid{channels ? "Slowest channels (per collective instance, the channel with the most "
                       "KernelStep transfer time; share of instances)"
                     : "Slowest peers (per collective instance, the peer with the most "
                       "KernelStep transfer time; share of instances)",
            {{"Slowest in (%)", "Slowest share", "slowest_share"},
             {"Instances", "Instances", "instances"},
             {"Mean step", "Mean step transfer (ns)", "mean_step_transfer_ns", true},
             {"Median of siblings", "Median of siblings (ns)", "sibling_median_ns", true},
             {"Ratio (x)", "Ratio", "ratio"},
             {"Comm", "Comm", "comm"},
             {"Link", "Link", "link"}},
            {},
            {}};
  for (const auto& f : findings) {
    // Rounded once for text and JSON alike: to_chars rounds a tie (6.25) to even, std::round away
    // from zero, so rounding each on its own printed 6.2 in the text and 6.3 in the JSON.
    const double share = std::round((f.instances == 0 ? 0 : 100.0 * f.slowest / f.instances) * 10) / 10;
    const double ratio = f.sibling_median_ns > 0 ? f.mean_step_ns / f.sibling_median_ns : 0;
    const std::string link = ParticipantLabel(f.pid, f.comm_rank) + (f.send ? " send" : " recv") +
                             (channels ? " ch " : " peer ") + std::to_string(f.index);
    grid.AddRow({Fixed(share, 1), std::to_string(f.instances), "", "", Fixed(ratio, 2),
                 Hex16(f.comm), link},
                {share, f.instances, std::round(f.mean_step_ns * 10) / 10,
                 std::round(f.sibling_median_ns * 10) / 10, std::round(ratio * 1000) / 1000,
                 Hex16(f.comm), link});
  }
  return grid;
}

// A report part: either a SummaryTable or a Grid, under a JSON key.
struct Part {
  std::string key;
  const SummaryTable* table = nullptr;
  Grid grid;
};

std::vector<Part> Parts(const StatsState& state, const StatsOptions& options) {
  std::vector<Part> parts;
  auto table = [&](const char* key, const SummaryTable& t) { parts.push_back({key, &t, {}}); };
  auto grid = [&](const char* key, Grid g) { parts.push_back({key, nullptr, std::move(g)}); };
  const ActivityTables& t = state.tables;
  if (options.Wants("host")) table("host", t.activity.host);
  if (options.Wants("gpu")) table("gpu", t.activity.gpu);
  if (options.Wants("coll")) table("collectives", t.collectives);
  if (options.Wants("channel")) {
    table("kernelstep_wait_per_channel", t.wait_per_channel);
    table("kernelstep_transfer_per_channel", t.transfer_per_channel);
  }
  if (options.Wants("peer")) {
    table("kernelstep_wait_per_peer", t.wait_per_peer);
    table("kernelstep_transfer_per_peer", t.transfer_per_peer);
  }
  if (options.Wants("bw")) grid("bandwidth", BandwidthGrid(state));
  if (options.Wants("straggler")) {
    table("straggler_delay_per_rank", state.stragglers.delay_per_rank);
    table("arrival_lag_per_rank", state.stragglers.lag_per_rank);
    grid("worst_instances", WorstGrid(state, options.top_n));
    grid("slowest_channels", LinkGrid(state.links.SlowestChannels(options.top_n), true));
    grid("slowest_peers", LinkGrid(state.links.SlowestPeers(options.top_n), false));
  }
  return parts;
}

std::string Preamble(const StatsState& state) {
  return "katrace-stats: " + Plural(state.files_read + state.files_failed, "file") + " (" +
         std::to_string(state.files_failed) + " with problems), " +
         Plural(state.ranks.size(), "rank") + ", " + Plural(state.events, "event") + "; " +
         Plural(state.incomplete_left_out, "incomplete event") + " left out" +
         (state.unusable_times_left_out == 0
              ? ""
              : ", " + Plural(state.unusable_times_left_out, "event") + " with unusable times");
}

std::string StragglerPreamble(const StatsState& state, const StatsOptions& options) {
  const StragglerReport& s = state.stragglers;
  std::string out = "Stragglers: " + std::to_string(s.instances) +
                    " collective instances (comm, func, seq) seen on 2+ ranks; arrival = " +
                    (options.gpu_arrival ? "GPU start" : "host Coll start") +
                    " on each rank's realtime clock";
  if (s.short_instances > 0 || s.single_rank_instances > 0) {
    out += "\n " + std::to_string(s.short_instances) +
           " instances lack some rank of their communicator; " +
           std::to_string(s.single_rank_instances) + " were seen on one rank only";
  }
  if (!s.error.empty()) out += "\n error: " + s.error;
  return out + "\n";
}

}  // namespace

std::string RenderStats(const StatsState& state, const StatsOptions& options) {
  const std::vector<Part> parts = Parts(state, options);
  if (options.format == StatsFormat::kJson) {
    Json out = Json::object();
    Json inputs = Json::object();
    inputs["files"] = state.files_read + state.files_failed;
    inputs["files_with_problems"] = state.files_failed;
    inputs["ranks"] = Json::array();
    for (int64_t rank : state.ranks) inputs["ranks"].push_back(rank);
    inputs["events"] = state.events;
    inputs["incomplete_left_out"] = state.incomplete_left_out;
    inputs["unusable_times_left_out"] = state.unusable_times_left_out;
    out["inputs"] = inputs;
    for (const Part& part : parts) {
      out[part.key] = part.table != nullptr ? Json::parse(part.table->ToJson()) : GridJson(part.grid);
    }
    if (options.Wants("straggler")) {
      const StragglerReport& s = state.stragglers;
      out["straggler_instances"] = {{"seen_on_2_or_more_ranks", s.instances},
                                    {"lacking_some_rank", s.short_instances},
                                    {"seen_on_one_rank", s.single_rank_instances},
                                    {"arrival", options.gpu_arrival ? "gpu" : "host"}};
      if (!s.error.empty()) out["straggler_instances"]["error"] = s.error;
    }
    return out.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
  }
  const bool csv = options.format == StatsFormat::kCsv;
  std::string out = csv ? "# " + Preamble(state) + "\n" : Preamble(state) + "\n";
  for (const Part& part : parts) {
    out += "\n";
    if (!csv && part.key == "straggler_delay_per_rank") out += StragglerPreamble(state, options) + "\n";
    if (part.table != nullptr) {
      if (csv) {
        const std::string text = part.table->ToText();
        out += "# " + text.substr(0, text.find('\n')) + "\n" + part.table->ToCsv();
      } else {
        out += part.table->ToText();
      }
    } else {
      out += csv ? "# " + part.grid.title + "\n" + MeaningLines(part.grid, "# ") + GridCsv(part.grid)
                 : GridText(part.grid);
    }
  }
  return out;
}

}  // namespace katrace::tools
