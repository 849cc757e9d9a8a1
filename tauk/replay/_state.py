"""One long-lived τ²-bench environment per (domain, solo mode, environment options, initialization data), put
back to its starting state after every simulation by restoring only the records the simulation reached.

Why this is exact. τ²-bench decides DB by comparing ``sha256(json.dumps(db.model_dump(), sort_keys=True,
default=str))`` of the replayed and the gold database (agent side and user side). Both start from the same state;
a record neither side reached is the same in both, so the two hashes are equal exactly when every reached record
and every field that cannot be tracked serialise to the same text — the same ``json.dumps`` of the same
``model_dump`` (restricted with pydantic's own ``include``), so values that compare equal in Python but are written
differently (``2`` and ``2.0``, ``True`` and ``1``) differ here as they do in the hash, and dict key order does
not matter here as it does not there. A database object swapped out during a simulation, or a key that is not a
string (τ²-bench's ``sort_keys`` fails on mixed keys), falls back to the whole serialisation.

Restoring: every reached record is replaced by a deep copy of its pristine version (a key the simulation added is
removed); a list or a field that is not a container is restored whole; plain per-toolkit state (telecom's id
counter) is restored from a snapshot. :meth:`BaseState.verify` checks the whole database against the pristine
hash (the tests run it after every simulation).
"""

from __future__ import annotations

import copy
import hashlib
import json
import pickle
import typing
from typing import Any

from tauk.replay._tracking import TrackedDict, TrackedList

__all__ = ["ABSENT", "BaseState", "Fingerprint", "serialise"]

ABSENT = "\x00absent"
"""The serialisation of a key a dict does not hold."""

ROLES = ("agent", "user")


def serialise(value: Any) -> str:
    """τ²-bench's hash input for a dumped value: ``json.dumps(value, sort_keys=True, default=str)``.

    >>> serialise({"b": 2, "a": 2.0}), serialise(2) == serialise(2.0)
    ('{"a": 2.0, "b": 2}', False)
    """
    return json.dumps(value, sort_keys=True, default=str)


def _plain(value: Any, depth: int = 0) -> bool:
    """Plain data (restorable by deep copy): scalars, containers of plain data, and small objects of plain data
    (telecom's ``IDGenerator``). Retrieval indices and clients are not plain and stay shared."""
    if depth > 6:
        return False
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return True
    if isinstance(value, list | tuple | set | frozenset):
        return len(value) <= 10_000 and all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return len(value) <= 10_000 and all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in value.items())
    d = getattr(value, "__dict__", None)
    if isinstance(d, dict) and type(value).__module__.startswith("tau2."):
        return all(_plain(v, depth + 1) for v in d.values())
    return False


def _value_type(model: type, name: str) -> type | None:
    """The record class of a ``dict[str, Record]`` field (None when the annotation is anything else)."""
    ann = model.model_fields[name].annotation
    args = typing.get_args(ann)
    if typing.get_origin(ann) in (dict, typing.Dict) and len(args) == 2 and isinstance(args[1], type):  # noqa: UP006
        return args[1]
    return None


class Slot:
    """One database object of an environment: its live (tracked) version and a pristine copy."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.fields = list(type(db).model_fields)
        self.dict_fields: list[str] = []
        self.list_fields: list[str] = []
        self.other_fields: list[str] = []
        self.record_type: dict[str, type | None] = {}
        self.trackers: dict[str, Any] = {}
        self._bytes: dict[str, bytes | None] = {}  # each field pickled once: its fresh copies, and "unchanged?"
        self._record_bytes: dict[tuple[str, Any], bytes] = {}
        self.pristine = copy.copy(db)  # the same model, its fields replaced by copies below
        values = {}
        for name in self.fields:
            v = db.__dict__.get(name)
            if type(v) is dict:
                self.dict_fields.append(name)
                self.record_type[name] = _value_type(type(db), name)
            elif type(v) is list:
                self.list_fields.append(name)
            else:
                self.other_fields.append(name)
            try:
                self._bytes[name] = pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)
                values[name] = pickle.loads(self._bytes[name])
            except Exception:  # noqa: BLE001 - what does not pickle is deep-copied
                self._bytes[name] = None
                values[name] = copy.deepcopy(v)
        self.pristine.__dict__.update(values)
        for name in self.dict_fields + self.list_fields:  # the live containers, tracked (same records)
            t = (TrackedDict if name in self.dict_fields else TrackedList)(db.__dict__[name])
            self.trackers[name] = t
            db.__dict__[name] = t
        self._base: dict[tuple[str, Any], str] = {}
        self.n_whole_restores = 0

    @property
    def pristine_hash(self) -> str:
        return hashlib.sha256(serialise(self.pristine.model_dump()).encode()).hexdigest()

    def _fresh(self, name: str) -> Any:
        b = self._bytes[name]
        return pickle.loads(b) if b is not None else copy.deepcopy(self.pristine.__dict__[name])

    def _install(self, name: str) -> None:
        fresh = self._fresh(name)
        if name in self.dict_fields:
            fresh = TrackedDict(fresh)
        elif name in self.list_fields:
            fresh = TrackedList(fresh)
        else:
            self.db.__dict__[name] = fresh
            return
        self.trackers[name] = fresh
        self.db.__dict__[name] = fresh
        self.n_whole_restores += 1

    def unchanged(self, name: str) -> bool:
        """Whether a whole tracked field still pickles to its pristine bytes (then it is exactly the pristine
        state: types, values and shared references)."""
        b = self._bytes.get(name)
        t = self.trackers.get(name)
        if b is None or t is None or self.db.__dict__.get(name) is not t:
            return False
        plain = dict.copy(t) if type(t) is TrackedDict else list.copy(t)
        try:
            return pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL) == b
        except Exception:  # noqa: BLE001
            return False

    def changed(self, name: str) -> set | None:
        """The keys of a dict field that every record of was handed out (a search over it) whose record no longer
        pickles to its pristine bytes, or was added or removed — exactly the records that differ; None when a
        record does not pickle (then the whole field counts as reached)."""
        t = self.trackers[name]
        src = self.pristine.__dict__[name]
        live = dict.keys(t)
        out = set(live ^ dict.keys(src))
        for k in live & dict.keys(src):
            b = self._record_bytes.get((name, k))
            try:
                if b is None:
                    b = self._record_bytes[(name, k)] = pickle.dumps(src[k], protocol=pickle.HIGHEST_PROTOCOL)
                if pickle.dumps(dict.__getitem__(t, k), protocol=pickle.HIGHEST_PROTOCOL) != b:
                    out.add(k)
            except Exception:  # noqa: BLE001
                return None
        return out

    def _record(self, name: str, key: Any) -> Any:
        """A fresh copy of one pristine record."""
        b = self._record_bytes.get((name, key))
        if b is None:
            try:
                b = self._record_bytes[(name, key)] = pickle.dumps(self.pristine.__dict__[name][key],
                                                                   protocol=pickle.HIGHEST_PROTOCOL)  # fmt: skip
            except Exception:  # noqa: BLE001
                return copy.deepcopy(self.pristine.__dict__[name][key])
        return pickle.loads(b)

    # -- what the simulation reached ------------------------------------------------------------------------
    def reached(self) -> dict[str, Any] | None:
        """``{field: set of keys | True}`` (True: the whole field), or None when a tracked container was replaced
        (compare the whole database)."""
        out: dict[str, Any] = {}
        for name, t in self.trackers.items():
            if self.db.__dict__.get(name) is not t:
                return None
            if t.all:
                keys = self.changed(name) if name in self.dict_fields else None
                if keys is None:
                    if not self.unchanged(name):
                        out[name] = True
                elif keys:
                    out[name] = keys
            elif t.touched:
                out[name] = set(t.touched)
        for name in self.other_fields:
            out[name] = True
        return out

    def restore(self) -> None:
        d = self.db.__dict__
        for name, t in list(self.trackers.items()):
            if d.get(name) is not t:
                self._install(name)
                continue
            if t.all:  # every record was handed out: restore those that differ (or the whole field)
                keys = self.changed(name) if name in self.dict_fields else None
                if keys is None:
                    if not self.unchanged(name):
                        self._install(name)
                        continue
                    keys = set()
            else:
                keys = t.touched
            if keys:
                src = self.pristine.__dict__[name]
                for k in keys:
                    if k in src:
                        dict.__setitem__(t, k, self._record(name, k))
                    else:
                        dict.pop(t, k, None)
            t.reset()
        for name in self.other_fields:
            d[name] = self._fresh(name)
        for k in [k for k in d if k not in self.pristine.__dict__]:  # an attribute a tool added to the model
            del d[k]

    # -- serialisations ---------------------------------------------------------------------------------------
    def base(self, name: str, key: Any) -> str:
        """The pristine serialisation of one record (``key``), or of a whole field (``key`` None)."""
        hit = self._base.get((name, key))
        if hit is None:
            hit = self.dump(self.pristine, name, key)
            self._base[(name, key)] = hit
        return hit

    def pristine_keys(self, name: str) -> set:
        return set(dict.keys(self.pristine.__dict__[name]))

    def dump(self, db: Any, name: str, key: Any) -> str:
        """One record (``key``) or one whole field (``key`` None) of ``db``, serialised as in τ²-bench's hash: the
        record's own ``model_dump()`` when it is of the field's declared record class (what the database's dump
        does for it), else the database's dump restricted to it with pydantic's ``include``."""
        if key is None:
            return serialise(db.model_dump(include={name: True})[name])
        if not isinstance(key, str):
            raise _MixedKeys(name, key)
        container = db.__dict__[name]
        value = dict.get(container, key, _MISSING)
        if value is _MISSING:
            return ABSENT
        if type(value) is self.record_type.get(name):
            return serialise(value.model_dump())
        return serialise(db.model_dump(include={name: {key: True}})[name][key])


_MISSING = object()


class _MixedKeys(Exception):
    def __init__(self, name: str, key: Any) -> None:
        super().__init__(f"{name} holds the non-string key {key!r}: τ²-bench's hash (json.dumps with sort_keys) "
                         "cannot order it")  # fmt: skip


class Fingerprint:
    """The reached part of one side's database, per role (agent, user): ``{(field, key): text}`` with ``key``
    None for a whole field — or, per role, the whole serialisation (``full``)."""

    __slots__ = ("parts", "full")

    def __init__(self) -> None:
        self.parts: dict[str, dict[tuple[str, Any], str]] = {}
        self.full: dict[str, str] = {}


class BaseState:
    """A long-lived environment in a known starting state (the domain database, optionally updated with a task's
    ``initialization_data``) that every simulation starts from and is put back into."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.toolkits = [tk for tk in (env.tools, env.user_tools) if tk is not None]
        self.slots: list[Slot] = []
        by_id: dict[int, Slot] = {}
        for tk in self.toolkits:
            db = getattr(tk, "db", None)
            if db is not None and id(db) not in by_id:
                by_id[id(db)] = Slot(db)
                self.slots.append(by_id[id(db)])
        self.role_slot: dict[str, Slot | None] = {
            "agent": by_id.get(id(env.tools.db)) if env.tools is not None and env.tools.db is not None else None,
            "user": by_id.get(id(env.user_tools.db)) if env.user_tools is not None and env.user_tools.db is not None
            else None,
        }  # fmt: skip
        self.db_of = [(tk, tk.db) for tk in self.toolkits]
        self.snapshots: list[tuple[Any, dict[str, Any], set[str]]] = []
        self.shared: list[str] = []  # toolkit attributes left shared (not plain data: retrieval indices, clients)
        for tk in self.toolkits:
            snap = {}
            for name, value in vars(tk).items():
                if name == "db":
                    continue
                if _plain(value):
                    snap[name] = copy.deepcopy(value)
                else:
                    self.shared.append(f"{type(tk).__name__}.{name}")
            self.snapshots.append((tk, snap, set(vars(tk))))
        self.env_attrs = dict(vars(env))

    # -- the databases the hash compares -----------------------------------------------------------------------
    def role_db(self, role: str) -> Any:
        tk = self.env.tools if role == "agent" else self.env.user_tools
        return None if tk is None else tk.db

    def fingerprint(self, full: frozenset = frozenset()) -> Fingerprint:
        """The reached part of the live databases (all of it for the roles in ``full``)."""
        fp = Fingerprint()
        for role in ROLES:
            db = self.role_db(role)
            slot = self.role_slot[role]
            if db is None:  # no toolkit or no database on this side: τ²-bench's hash is None on both
                fp.parts[role] = {}
                continue
            reached = None if role in full or slot is None or db is not slot.db else slot.reached()
            if reached is None:
                fp.full[role] = serialise(db.model_dump())
                continue
            try:
                parts = {}
                for name, keys in reached.items():
                    if keys is True:
                        if name in slot.dict_fields:
                            for k in set(dict.keys(db.__dict__[name])) | slot.pristine_keys(name):
                                parts[(name, k)] = slot.dump(db, name, k)
                        else:
                            parts[(name, None)] = slot.dump(db, name, None)
                    else:
                        for k in keys:
                            parts[(name, k)] = slot.dump(db, name, k)
                fp.parts[role] = parts
            except _MixedKeys:
                fp.full[role] = serialise(db.model_dump())  # raises as τ²-bench's hash does
        return fp

    def restore(self) -> None:
        for tk, db in self.db_of:
            if tk.db is not db:
                tk.db = db
        for slot in self.slots:
            slot.restore()
        for tk, snap, names in self.snapshots:
            for name in [n for n in vars(tk) if n not in names]:
                delattr(tk, name)
            for name, value in snap.items():
                setattr(tk, name, copy.deepcopy(value))
        env_d = vars(self.env)
        for k, v in self.env_attrs.items():
            if env_d.get(k) is not v:
                env_d[k] = v

    def verify(self) -> None:
        """Raise AssertionError when the live databases are not exactly the pristine ones (a state leak)."""
        for slot in self.slots:
            h = hashlib.sha256(serialise(slot.db.model_dump()).encode()).hexdigest()
            assert h == slot.pristine_hash, f"replay state leak in {type(slot.db).__name__}"


def matches(gold: Fingerprint, pred: Fingerprint, base: BaseState) -> dict[str, bool]:
    """Per role, whether the gold and the replayed databases hash equal (``base``: the replayed side's starting
    state, whose pristine records stand in for the records a side did not reach)."""
    out = {}
    for role in ROLES:
        if role in gold.full or role in pred.full:
            g, p = gold.full.get(role, ABSENT), pred.full.get(role, ABSENT)
            out[role] = g == p
            continue
        slot = base.role_slot[role]
        gp, pp = gold.parts.get(role, {}), pred.parts.get(role, {})
        ok = True
        for key in gp.keys() | pp.keys():
            g = gp.get(key)
            p = pp.get(key)
            if g is None:
                g = slot.base(*key)
            if p is None:
                p = slot.base(*key)
            if g != p:
                ok = False
                break
        out[role] = ok
    return out
