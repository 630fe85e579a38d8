#include "synth/solver/iopddl_stream.hpp"

#include <cerrno>
#include <cstring>
#include <iterator>
#include <vector>

#include <zlib.h>

#include "common/error.hpp"
#include "common/json_field.hpp"

namespace shardsynth::synth {
namespace {

using nlohmann::json;

// A file read through zlib (gzip or plain) one chunk at a time.
class GzChunks {
 public:
  explicit GzChunks(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb")), buffer_(1 << 20) {
    if (file_ == nullptr) throw common::InputError("cannot read '" + path + "': " + std::strerror(errno));
  }
  GzChunks(const GzChunks&) = delete;
  GzChunks& operator=(const GzChunks&) = delete;
  ~GzChunks() { gzclose(file_); }

  // Whether every byte has been read; reads the next chunk when the last is used up.
  bool at_end() { return next_ == size_ && !refill(); }
  // The current byte (not at_end()).
  const char& current() const { return buffer_[next_]; }
  // Moves to the next byte.
  void advance() { ++next_; }

 private:
  bool refill() {
    const int got = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
    if (got < 0) {
      int code = 0;
      throw common::InputError("cannot read '" + path_ + "': " + gzerror(file_, &code));
    }
    next_ = 0;
    size_ = static_cast<std::size_t>(got);
    return size_ > 0;
  }

  std::string path_;
  gzFile file_;
  std::vector<char> buffer_;
  std::size_t next_ = 0;
  std::size_t size_ = 0;
};

// An input iterator over GzChunks, as nlohmann's iterator input adapter takes:
// a default-constructed one is the end.
class GzIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  GzIterator() = default;
  explicit GzIterator(GzChunks& chunks) : chunks_(&chunks) {}
  reference operator*() const { return chunks_->current(); }
  GzIterator& operator++() {
    chunks_->advance();
    return *this;
  }
  friend bool operator==(const GzIterator& a, const GzIterator& b) { return a.done() == b.done(); }

 private:
  bool done() const { return chunks_ == nullptr || chunks_->at_end(); }
  GzChunks* chunks_ = nullptr;
};

// What the next value stands for, from the open containers and the last key.
enum class Slot {
  kRoot,     // the whole document
  kProblem,  // root.problem
  kNodes,    // problem.nodes
  kEdges,    // problem.edges
  kName,     // problem.name
  kLimit,    // problem.usage_limit
  kTable,    // one of the five tables
  kRow,      // a row of a table
  kEntry,    // a value in a row
  kSkip,     // anything else, ignored as problem_from_iopddl ignores it
};

// An open container: the slot it fills, and for a table or row, where its numbers go.
struct Frame {
  Slot slot = Slot::kSkip;     // what the container stands for
  RawTable* table = nullptr;   // the table of a kTable or kRow
  std::size_t entries = 0;     // values seen so far in a kRow
  bool faulted = false;        // whether a kRow already has its fault
};

// The next value's slot and, for a table, which one.
struct Target {
  Slot slot = Slot::kSkip;    // what it stands for
  RawTable* table = nullptr;  // its table, where it is or belongs to one
};

// SAX events to a RawIopddl. Values that a check would print whole (a
// structure where an integer belongs, a structured usage_limit) are built as
// small JSON values; everything else goes straight into the flat tables.
class RawHandler final : public nlohmann::json_sax<json> {
 public:
  explicit RawHandler(const std::string& path) : path_(path) {}
  RawIopddl take() { return std::move(raw_); }

  bool null() override { return scalar(json(nullptr)); }
  bool boolean(bool value) override { return scalar(json(value)); }
  bool number_integer(number_integer_t value) override { return scalar(json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return scalar(json(value)); }
  bool number_float(number_float_t value, const string_t&) override { return scalar(json(value)); }
  bool string(string_t& value) override { return scalar(json(std::move(value))); }
  bool binary(binary_t&) override { return true; }  // not in JSON text
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    (capture_open_.empty() ? key_ : capture_key_) = key;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw common::InputError(path_ + ": not valid JSON (" + common::json_parse_failure(e) + ")");
  }

 private:
  Target target() {
    if (frames_.empty()) return {Slot::kRoot};
    const Frame& top = frames_.back();
    switch (top.slot) {
      case Slot::kRoot:
        return {key_ == "problem" ? Slot::kProblem : Slot::kSkip};
      case Slot::kProblem:
        if (key_ == "nodes") return {Slot::kNodes};
        if (key_ == "edges") return {Slot::kEdges};
        if (key_ == "name") return {Slot::kName};
        if (key_ == "usage_limit") return {Slot::kLimit};
        return {Slot::kSkip};
      case Slot::kNodes:
        if (key_ == "intervals") return {Slot::kTable, &raw_.intervals};
        if (key_ == "costs") return {Slot::kTable, &raw_.node_costs};
        if (key_ == "usages") return {Slot::kTable, &raw_.usages};
        return {Slot::kSkip};
      case Slot::kEdges:
        if (key_ == "nodes") return {Slot::kTable, &raw_.edge_nodes};
        if (key_ == "costs") return {Slot::kTable, &raw_.edge_costs};
        return {Slot::kSkip};
      case Slot::kTable:
        return {Slot::kRow, top.table};
      case Slot::kRow:
        return {Slot::kEntry, top.table};
      default:
        return {Slot::kSkip};
    }
  }

  // A value arrives in `t` (for a container, as it opens): a later key of
  // the same name replaces what an earlier one held, as in a JSON document.
  void arrive(const Target& t) {
    switch (t.slot) {
      case Slot::kProblem:
        raw_ = RawIopddl{};
        raw_.has_problem = true;
        break;
      case Slot::kNodes:
        raw_.has_nodes = true;
        raw_.intervals.reset(RawPresence::kMissing);
        raw_.node_costs.reset(RawPresence::kMissing);
        raw_.usages.reset(RawPresence::kMissing);
        break;
      case Slot::kEdges:
        raw_.has_edges = true;
        raw_.edge_nodes.reset(RawPresence::kMissing);
        raw_.edge_costs.reset(RawPresence::kMissing);
        break;
      case Slot::kName:
        raw_.name = "iopddl";
        break;
      case Slot::kTable:
        t.table->reset(RawPresence::kNotArray);
        break;
      default:
        break;
    }
  }

  bool scalar(json value) {
    if (!capture_open_.empty()) {
      put(std::move(value));
      return true;
    }
    const Target t = target();
    arrive(t);
    switch (t.slot) {
      case Slot::kName:
        if (value.is_string()) raw_.name = value.get<std::string>();
        break;
      case Slot::kLimit:
        raw_.usage_limit = std::move(value);
        break;
      case Slot::kRow:
        t.table->faults.push_back({t.table->rows(), -1, ""});
        t.table->end_row();
        break;
      case Slot::kEntry:
        entry(std::move(value));
        break;
      default:
        break;
    }
    return true;
  }

  void entry(json value) {
    Frame& row = frames_.back();
    const std::size_t j = row.entries++;
    if (row.faulted) return;
    int64_t v = 0;
    std::string reason = integer_fault(value, v);
    if (reason.empty()) {
      row.table->values.push_back(v);
      return;
    }
    row.faulted = true;
    row.table->faults.push_back({row.table->rows(), static_cast<std::ptrdiff_t>(j), std::move(reason)});
  }

  bool open(bool is_object) {
    if (!capture_open_.empty()) {
      capture_open_.push_back(put(is_object ? json::object() : json::array()));
      return true;
    }
    const Target t = target();
    arrive(t);
    Frame frame;
    switch (t.slot) {
      case Slot::kRoot:
      case Slot::kProblem:
      case Slot::kNodes:
      case Slot::kEdges:
        if (is_object) frame.slot = t.slot;
        break;
      case Slot::kLimit:
        capture_into_ = nullptr;
        capture_open_.push_back(put(is_object ? json::object() : json::array()));
        return true;
      case Slot::kTable:
        if (!is_object) {
          t.table->reset(RawPresence::kArray);
          frame = {Slot::kTable, t.table};
        }
        break;
      case Slot::kRow:
        if (is_object) {
          t.table->faults.push_back({t.table->rows(), -1, ""});
          t.table->end_row();
        } else {
          frame = {Slot::kRow, t.table};
        }
        break;
      case Slot::kEntry:
        if (!frames_.back().faulted) {
          // The row's fault, once the structure is whole enough to print.
          capture_into_ = &frames_.back();
          capture_open_.push_back(put(is_object ? json::object() : json::array()));
          return true;
        }
        ++frames_.back().entries;
        break;
      default:
        break;
    }
    frames_.push_back(frame);
    return true;
  }

  bool close() {
    if (!capture_open_.empty()) {
      capture_open_.pop_back();
      if (capture_open_.empty()) captured();
      return true;
    }
    if (frames_.back().slot == Slot::kRow) frames_.back().table->end_row();
    frames_.pop_back();
    return true;
  }

  // Adds a value to the structure being captured; returns where it now lives.
  json* put(json value) {
    if (capture_open_.empty()) {
      captured_ = std::move(value);
      return &captured_;
    }
    json& top = *capture_open_.back();
    if (top.is_array()) {
      top.push_back(std::move(value));
      return &top.back();
    }
    json& slot = top[capture_key_];
    slot = std::move(value);
    return &slot;
  }

  void captured() {
    if (capture_into_ == nullptr) {
      raw_.usage_limit = std::move(captured_);
    } else {
      entry(std::move(captured_));
    }
    captured_ = nullptr;
  }

  std::string path_;
  RawIopddl raw_;
  std::vector<Frame> frames_;
  std::string key_;                  // the last key outside a capture
  std::vector<json*> capture_open_;  // the open containers of the value being captured
  std::string capture_key_;          // the last key inside a capture
  json captured_;                    // the value being captured
  Frame* capture_into_ = nullptr;    // the row it is an entry of; null for usage_limit
};

}  // namespace

RawIopddl read_iopddl_stream(const std::string& path) {
  GzChunks chunks(path);
  RawHandler handler(path);
  json::sax_parse(GzIterator(chunks), GzIterator(), &handler);
  return handler.take();
}

}  // namespace shardsynth::synth
