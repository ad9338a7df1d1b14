"""A bounded cache of compiled programs (sessions, compiled models, interpreters) by signature,
for the Python backends that compile one program per signature and reuse it.

Bounded because the worker's address space is capped (RLIMIT_AS, include/gscheck/plugin.h):
each compiled program holds memory and often threads, and a default sweep draws thousands of
signatures. Unbounded, OpenVINO's CPU plugin failed every case after about 3,000 of them with
"Resource temporarily unavailable" (a thread it could not start). The least recently used
program goes first. A signature the runtime declines (gscheck.Unimplemented from make) is
cached as declined, so it is not compiled again.
"""
from collections import OrderedDict

import gscheck


class SignatureCache:
    def __init__(self, capacity):
        self._capacity = capacity
        self._entries = OrderedDict()

    def get(self, key, make):
        """The program for key, made by make() when it is not cached."""
        entry = self._entries.get(key)
        if entry is None:
            try:
                entry = make()
            except gscheck.Unimplemented as e:
                entry = e
            self._entries[key] = entry
            if len(self._entries) > self._capacity:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(key)
        if isinstance(entry, gscheck.Unimplemented):
            raise gscheck.Unimplemented(str(entry)) from None  # a fresh one: no old traceback
        return entry

    def __len__(self):
        return len(self._entries)
