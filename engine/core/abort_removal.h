#pragma once
// Files to remove when a process is ended at once from a signal handler (a second Ctrl-C): what
// it made for this run only (its checkpoint folder), and the temporary file of each output being
// written, which would otherwise stay beside its target as PATH.tmp.XXXXXX. The paths sit in a
// fixed table, so that the handler neither allocates nor locks.
#include <string>

namespace ringlab::abort_removal {

// Registers `path`; returns its slot, or -1 when the table is full or the path too long (the file
// is then left behind by an abort, as before it was registered).
int add(const std::string& path);
// Takes a path out of the table (renamed into place, or removed already); -1 is ignored.
void drop(int slot);
// For a signal handler (async-signal-safe): unlinks every registered path, then removes the ones
// that are folders, newest first, once the files in them are gone.
void remove_all();

}  // namespace ringlab::abort_removal
