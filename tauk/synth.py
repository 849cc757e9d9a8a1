"""Seeded synthetic τ²-bench results (``tauk synth``).

The generator writes monolithic τ²-bench results files with exactly the upstream shape (top-level ``timestamp``,
``info``, ``tasks``, ``simulations``, ``simulation_index: null``) whose per-task success probabilities are *known*:

* every task ``t`` of a domain gets a difficulty ``d_t ~ Normal(0, 1.3)``;
* every agent gets a level ``q`` (its success probability on a task of difficulty 0), i.e. a skill
  ``s = logit(q)``;
* ``p(agent, task) = sigmoid(s - d_t)`` (see :func:`true_success_probabilities`).

Each trial succeeds with probability ``p``; the trajectory is then *constructed* so that the upstream scoring kernel
(SPEC §2: termination gate, COMMUNICATE, ACTION with ``compare_args``, product over ``reward_basis`` with DB from
``db_check.db_reward``) gives exactly the recorded reward. Failures are spread over the components of the basis
(wrong or missing tool call, missing communicate string, DB mismatch, premature ending with ``max_steps`` /
``too_many_errors``); some successful trials fail a component that lies outside the basis (diagnostic only).

Special tasks (present when the domain has enough tasks):

* airline task ``"7"`` has a ``communicate_info`` string containing a comma, which can never match (commas are
  stripped from the messages only), so it always fails COMMUNICATE: its true ``p`` is 0;
* retail task ``"5"`` has ``evaluation_criteria: null``: reward 1 unless the trial ends prematurely.

Everything is deterministic in the arguments: the same call gives byte-identical files (no wall clock, no global
RNG; ids are uuid4-shaped values drawn from seeded ``random.Random`` instances).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import math
import random
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import polars as pl

__all__ = [
    "SAMPLE_AGENTS",
    "SAMPLE_DOMAINS",
    "SAMPLE_N_TASKS",
    "SAMPLE_N_TRIALS",
    "SAMPLE_SEED",
    "add_cli",
    "synthesize",
    "true_success_probabilities",
    "write_corpus",
    "write_results",
    "write_sample",
]

GREETING = "Hi! How can I help you today?"
SAMPLE_AGENTS: dict[str, float] = {"atlas-large": 0.8, "atlas-small": 0.55, "baseline": 0.3}
SAMPLE_DOMAINS: tuple[str, ...] = ("airline", "retail")
SAMPLE_N_TASKS = 25
SAMPLE_N_TRIALS = 4
SAMPLE_SEED = 2025
SAMPLE_RAW_DATA = "user"  # provider raw_data on user-simulator messages only (keeps the sample small)
SUPPORTED_DOMAINS = ("airline", "retail")
COMMA_TASK = ("airline", 7)  # communicate_info with a comma: always fails COMMUNICATE (true p = 0)
NULL_CRITERIA_TASK = ("retail", 5)  # evaluation_criteria null: reward 1 unless premature ending
DIFFICULTY_SD = 1.3
USER_MODEL = "gpt-4.1-mini-2025-04-14"

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_FIRST = ["Emma", "Liam", "Olivia", "Noah", "Ava", "Yusuf", "Mia", "Raj", "Sofia", "Lucas", "Anya", "Omar",
          "Chen", "Isabella", "Mateo", "Aarav", "Fatima", "Ethan", "Harper", "Ivan"]
_LAST = ["Kim", "Rossi", "Garcia", "Jackson", "Silva", "Nguyen", "Patel", "Smith", "Muller", "Khan", "Lopez",
         "Taylor", "Brown", "Ito", "Moreau", "Hansen", "Novak", "Ahmed", "Costa", "Wright"]
_AIRPORTS = ["ATL", "JFK", "LAX", "ORD", "SFO", "SEA", "DEN", "BOS", "MIA", "PHX", "LAS", "DFW", "IAH", "MSP",
             "DTW", "EWR", "CLT", "PHL"]
_CITIES = [("Austin", "TX", "78701"), ("Denver", "CO", "80202"), ("Seattle", "WA", "98101"),
           ("Boston", "MA", "02108"), ("Chicago", "IL", "60601"), ("Phoenix", "AZ", "85004"),
           ("Columbus", "OH", "43215"), ("Portland", "OR", "97205"), ("Philadelphia", "PA", "19122"),
           ("San Diego", "CA", "92101")]
_STREETS = ["Main Street", "Oak Avenue", "Pine Road", "Maple Drive", "Cedar Lane", "Elm Street", "Lakeview Drive",
            "Hillcrest Road", "River Road", "Sunset Boulevard"]
_PRODUCTS = ["Mechanical Keyboard", "Smart Thermostat", "Wireless Earbuds", "Water Bottle", "Desk Lamp",
             "Hiking Boots", "Laptop", "Office Chair", "Running Shoes", "Backpack", "Coffee Maker", "Yoga Mat",
             "Bluetooth Speaker", "Electric Kettle", "Gaming Mouse"]
_CABINS = ["basic_economy", "economy", "business"]

_AIRLINE_POLICY = (
    "# Airline Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST.\n\nAs an airline agent, you can help "
    "users **book**, **modify**, or **cancel** flight reservations. You also handle **refunds and compensation**."
    "\n\nBefore taking any actions that update the booking database, you must list the action details and obtain "
    "explicit user confirmation (yes) to proceed.\n\nYou should transfer the user to a human agent if and only if "
    "the request cannot be handled within the scope of your actions.\n\n(synthetic policy generated by tauk)"
)
_RETAIL_POLICY = (
    "# Retail agent policy\n\nAs a retail agent, you can help users:\n\n- **cancel or modify pending orders**\n"
    "- **return or exchange delivered orders**\n- **modify their default user address**\n- **provide information "
    "about their own profile, orders, and related products**\n\nAt the beginning of the conversation, you have to "
    "authenticate the user identity by locating their user id via email, or via name + zip code.\n\n"
    "(synthetic policy generated by tauk)"
)
_GUIDELINES = (
    "# User Simulation Guidelines\nYou are playing the role of a customer contacting a customer service "
    "representative.\n(synthetic guidelines generated by tauk)"
)


# ---------------------------------------------------------------------------------------------------------------
# Task definitions
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class _Gold:
    action: dict[str, Any]  # the gold action dict exactly as stored in the task
    is_write: bool  # changes the DB (DB check compares write calls)
    result: str  # tool message content answering the correct call
    confirm: str | None = None  # assistant confirmation request before a write
    lead: str | None = None  # optional assistant text carried with the tool call


@dataclass
class _Task:
    id: str
    domain: str
    template: str
    difficulty: float
    golds: list[_Gold]
    communicate_info: list[str]
    reward_basis: list[str]
    has_criteria: bool
    impossible: bool
    opening: str
    ask_identity: str
    identity_reply: str
    summary_ok: str
    summary_fail: str
    extra_write: tuple[str, dict[str, Any], str]  # an unwanted write: (name, arguments, result)
    extra_summary: str  # what the agent says after the unwanted write
    definition: dict[str, Any] = field(default_factory=dict)
    transfer: bool = False


def _rid(rng: random.Random, n: int = 6) -> str:
    return "".join(rng.choices(_UPPER_DIGITS, k=n))


def _person(rng: random.Random) -> tuple[str, str]:
    return rng.choice(_FIRST), rng.choice(_LAST)


def _address(rng: random.Random) -> dict[str, str]:
    city, state, zip_ = rng.choice(_CITIES)
    return {"address1": f"{rng.randint(10, 999)} {rng.choice(_STREETS)}", "address2": f"Suite {rng.randint(100, 999)}",
            "city": city, "country": "USA", "state": state, "zip": zip_}


def _money(x: float) -> str:
    """Format like an agent would: thousands separators, cents when needed."""
    return f"${x:,.2f}" if x != int(x) else f"${int(x):,}"


def _num(x: float) -> str:
    """The communicate_info form of an amount (no separators)."""
    return f"{x:.2f}" if x != int(x) else str(int(x))


def _dumps(obj: Any) -> str:
    return orjson.dumps(obj).decode()


def _action(task_id: str, k: int, name: str, arguments: dict[str, Any], compare_args: list[str] | None) -> dict:
    return {"action_id": f"{task_id}_{k}", "requestor": "assistant", "name": name, "arguments": arguments,
            "info": None, "compare_args": compare_args}


def _pick_compare(rng: random.Random, args: dict[str, Any], is_write: bool) -> list[str] | None:
    """Mostly None; some name-only ([]) reads; some writes compare a subset of their keys."""
    u = rng.random()
    if is_write and len(args) >= 3 and u < 0.3:
        keys = sorted(args)
        return sorted(rng.sample(keys, rng.randint(1, len(keys) - 1)))
    if not is_write and u < 0.1:
        return []
    return None


class _Builder:
    """Accumulates gold actions for one task."""

    def __init__(self, task_id: str, rng: random.Random):
        self.task_id, self.rng, self.golds = task_id, rng, []

    def add(self, name: str, args: dict[str, Any], result: Any, *, write: bool = False, confirm: str | None = None,
            lead: str | None = None, compare_args: Any = "auto") -> None:
        ca = _pick_compare(self.rng, args, write) if compare_args == "auto" else compare_args
        res = result if isinstance(result, str) else _dumps(result)
        self.golds.append(_Gold(_action(self.task_id, len(self.golds), name, args, ca), write, res, confirm, lead))


def _airline_user(rng: random.Random) -> dict[str, Any]:
    first, last = _person(rng)
    uid = f"{first.lower()}_{last.lower()}_{rng.randint(1000, 9999)}"
    card = f"credit_card_{rng.randint(1000000, 9999999)}"
    gift = f"gift_card_{rng.randint(1000000, 9999999)}"
    return {"first": first, "last": last, "user_id": uid, "card": card, "gift": gift,
            "membership": rng.choice(["regular", "silver", "gold"]), "address": _address(rng)}


def _airline_user_details(u: dict[str, Any], reservations: list[str]) -> dict[str, Any]:
    return {"user_id": u["user_id"], "name": {"first_name": u["first"], "last_name": u["last"]},
            "address": u["address"], "email": f"{u['first'].lower()}.{u['last'].lower()}@example.com",
            "payment_methods": {u["card"]: {"source": "credit_card", "id": u["card"], "brand": "visa",
                                            "last_four": u["card"][-4:]},
                                u["gift"]: {"source": "gift_card", "id": u["gift"], "amount": 127}},
            "membership": u["membership"], "reservations": reservations}


def _reservation(rng: random.Random, rid: str, u: dict[str, Any], cabin: str, n_pax: int) -> dict[str, Any]:
    o, d = rng.sample(_AIRPORTS, 2)
    day = rng.randint(16, 28)
    flights = [{"flight_number": f"HAT{rng.randint(1, 299):03d}", "origin": o, "destination": d,
                "date": f"2024-05-{day:02d}", "price": rng.randint(50, 900)}]
    pax = [{"first_name": u["first"], "last_name": u["last"], "dob": f"19{rng.randint(50, 99)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"}]
    for _ in range(n_pax - 1):
        f, la = _person(rng)
        pax.append({"first_name": f, "last_name": la, "dob": f"19{rng.randint(50, 99)}-0{rng.randint(1, 9)}-2{rng.randint(0, 8)}"})
    total = sum(fl["price"] for fl in flights) * n_pax
    return {"reservation_id": rid, "user_id": u["user_id"], "origin": o, "destination": d, "flight_type": "one_way",
            "cabin": cabin, "flights": flights, "passengers": pax,
            "payment_history": [{"payment_id": u["card"], "amount": total}],
            "created_at": f"2024-05-{rng.randint(1, 14):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00",
            "total_baggages": rng.randint(0, 2), "nonfree_baggages": 0, "insurance": rng.choice(["yes", "no"]),
            "status": None}


def _airline_task(task_id: str, rng: random.Random, comma: bool) -> dict[str, Any]:
    u = _airline_user(rng)
    rid = _rid(rng)
    cabin = rng.choice(_CABINS)
    res = _reservation(rng, rid, u, cabin, rng.randint(1, 3))
    b = _Builder(task_id, rng)
    template = "info_total" if comma else rng.choices(
        ["cancel", "baggage", "change_flight", "compensation", "info_total", "transfer", "refuse"],
        weights=[3, 2, 2, 2, 2, 1, 1])[0]
    name = f"{u['first']} {u['last']}"
    ask = "I can help with that. Could you please provide your user ID?"
    reply = f"Sure, my user ID is {u['user_id']}."
    b.add("get_user_details", {"user_id": u["user_id"]}, _airline_user_details(u, [rid]),
          lead=rng.choice([None, "Let me look up your profile."]))
    info: list[str] = []
    transfer = False
    extra = ("cancel_reservation", {"reservation_id": rid}, _dumps({**res, "status": "cancelled"}))
    if template == "cancel":
        reason = rng.choice(["change of plan", "airline cancelled flight", "other"])
        b.add("get_reservation_details", {"reservation_id": rid}, res)
        refund = float(res["payment_history"][0]["amount"])
        b.add("cancel_reservation", {"reservation_id": rid}, {**res, "status": "cancelled"}, write=True,
              confirm=f"To confirm: I will cancel reservation {rid} ({res['origin']} to {res['destination']}). "
                      "Shall I proceed (yes/no)?")
        opening = f"Hi, I need to cancel my reservation {rid}. The reason is: {reason}."
        if rng.random() < 0.6:
            info = [_num(refund)]
        ok = (f"Your reservation {rid} has been cancelled. A refund of {_money(refund)} will go back to your "
              "original payment method within 5 to 7 business days.")
        fail = f"Your reservation {rid} has been cancelled. Is there anything else I can help you with?"
        purpose = "Cancellation allowed by policy; agent must cancel and state the refund."
    elif template == "baggage":
        b.add("get_reservation_details", {"reservation_id": rid}, res)
        extra_bags = rng.randint(1, 3)
        total = res["total_baggages"] + extra_bags
        fee = 50 * extra_bags
        args = {"reservation_id": rid, "total_baggages": total, "nonfree_baggages": extra_bags,
                "payment_method_id": u["card"]}
        b.add("update_reservation_baggages", args, {**res, "total_baggages": total, "nonfree_baggages": extra_bags},
              write=True, confirm=f"I will update reservation {rid} to {total} checked bags, charged to your card "
                                  f"ending in {u['card'][-4:]}. Do you confirm (yes)?")
        opening = f"Hello! I'd like to add {extra_bags} checked bag(s) to my reservation {rid}."
        if rng.random() < 0.5:
            info = [str(fee)]
        ok = f"Done! Your bags are added; the total baggage fee is {_money(fee)}."
        fail = "Done! Your bags are added to the reservation."
        purpose = "Add non-free checked bags and state the fee."
    elif template == "change_flight":
        new_day = rng.randint(16, 28)
        new_fn = f"HAT{rng.randint(1, 299):03d}"
        search = {"origin": res["origin"], "destination": res["destination"], "date": f"2024-05-{new_day:02d}"}
        price = rng.randint(80, 1200)
        b.add("search_direct_flight", search,
              [{"flight_number": new_fn, "origin": res["origin"], "destination": res["destination"],
                "status": "available", "prices": {cabin: price}}])
        args = {"reservation_id": rid, "cabin": cabin,
                "flights": [{"flight_number": new_fn, "date": search["date"]}], "payment_method_id": u["card"]}
        b.add("update_reservation_flights", args, {**res, "flights": args["flights"]}, write=True,
              confirm=f"I can move you to flight {new_fn} on {search['date']}. Shall I go ahead (yes)?")
        opening = f"Hi, I want to move my flight on reservation {rid} to {search['date']}."
        diff = price - res["flights"][0]["price"]
        if rng.random() < 0.4:
            info = [_num(abs(diff))]
        word = "charge" if diff > 0 else "refund"
        ok = f"Your reservation now uses flight {new_fn}. The fare difference {word} is {_money(abs(diff))}."
        fail = f"Your reservation now uses flight {new_fn}. Have a nice trip!"
        purpose = "Modify the flight of a reservation within policy."
    elif template == "compensation":
        b.add("get_reservation_details", {"reservation_id": rid}, res)
        amount = 100 * len(res["passengers"])
        b.add("send_certificate", {"user_id": u["user_id"], "amount": amount},
              f"Certificate certificate_{rng.randint(1000000, 9999999)} added to user {u['user_id']} with amount "
              f"{amount}.", write=True,
              confirm="Given the delay, I can offer a travel certificate as a gesture of goodwill. Shall I send it?")
        opening = f"My flight on reservation {rid} was delayed and I am really unhappy about it."
        info = [str(amount)]
        ok = f"I have issued a travel certificate worth {_money(amount)} to your account."
        fail = "I have issued a travel certificate to your account."
        purpose = "Compensate a delayed flight with a certificate and state its amount."
    elif template == "info_total":
        total = sum(rng.randint(300, 1400) for _ in range(3)) if comma else rng.randint(150, 4000)
        b.add("get_reservation_details", {"reservation_id": rid}, {**res, "payment_history": [
            {"payment_id": u["card"], "amount": total}]})
        opening = f"Could you tell me how much I paid in total for reservation {rid}?"
        info = [f"{total:,}"] if comma else [str(total)]
        ok = f"You paid a total of {_money(total)} for reservation {rid}."
        fail = f"I have checked reservation {rid}; the payment went through your card on file."
        purpose = "Report the total paid for a reservation."
    elif template == "transfer":
        transfer = True
        summary = f"User {u['user_id']} wants to change the origin of reservation {rid}, which policy forbids."
        b.add("transfer_to_human_agents", {"summary": summary}, "Transfer successful", compare_args=[])
        opening = f"I need to change the departure airport of my reservation {rid}."
        ok = fail = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."
        purpose = "Request out of scope: transfer to a human agent."
    else:  # refuse
        b.golds = []
        opening = f"I want to cancel my basic economy reservation {rid} and get a full refund."
        ok = fail = (f"I'm sorry, but reservation {rid} is not eligible for cancellation with a refund under our "
                     "policy.")
        purpose = "Agent must refuse a cancellation that the policy does not allow."
    return {"template": template, "builder": b, "info": info, "opening": opening, "ask": ask, "reply": reply,
            "ok": ok, "fail": fail, "extra": extra, "transfer": transfer, "purpose": purpose,
            "known": f"You are {name}. Your user id is {u['user_id']}.", "reason": opening,
            "extra_summary": f"Your reservation {rid} has been cancelled."}


def _retail_task(task_id: str, rng: random.Random) -> dict[str, Any]:
    first, last = _person(rng)
    uid = f"{first.lower()}_{last.lower()}_{rng.randint(1000, 9999)}"
    addr = _address(rng)
    email = f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@example.com"
    card = f"credit_card_{rng.randint(1000000, 9999999)}"
    oid = f"#W{rng.randint(1000000, 9999999)}"
    n_items = rng.randint(1, 3)
    items = [{"name": p, "product_id": str(rng.randint(1000000000, 9999999999)),
              "item_id": str(rng.randint(1000000000, 9999999999)), "price": round(rng.uniform(15, 600), 2),
              "options": {}} for p in rng.sample(_PRODUCTS, n_items)]
    status = "pending"
    template = rng.choices(["cancel_order", "return", "exchange", "address", "info_balance", "refuse"],
                           weights=[3, 3, 2, 2, 2, 1])[0]
    if template in ("return", "exchange", "refuse"):
        status = "delivered" if template != "refuse" else "processed"
    order = {"order_id": oid, "user_id": uid, "address": addr, "items": items, "fulfillments": [],
             "status": status, "payment_history": [{"transaction_type": "payment",
                                                    "amount": round(sum(i["price"] for i in items), 2),
                                                    "payment_method_id": card}]}
    b = _Builder(task_id, rng)
    by_email = rng.random() < 0.4
    if by_email:
        b.add("find_user_id_by_email", {"email": email}, uid)
        ask = "I'd be happy to help. First, could you please provide the email address on your account?"
        reply = f"Sure, it's {email}."
        known = f"You are {first} {last}; your email is {email}."
    else:
        b.add("find_user_id_by_name_zip", {"first_name": first, "last_name": last, "zip": addr["zip"]}, uid)
        ask = "I'd be happy to help. To verify your identity, could you give me your full name and zip code?"
        reply = f"Yes, my name is {first} {last} and my zip code is {addr['zip']}."
        known = f"You are {first} {last} in zip code {addr['zip']}."
    info: list[str] = []
    extra = ("cancel_pending_order", {"order_id": oid, "reason": "no longer needed"},
             _dumps({**order, "status": "cancelled"}))
    if template != "info_balance":
        b.add("get_order_details", {"order_id": oid}, order)
    if template == "cancel_order":
        reason = rng.choice(["no longer needed", "ordered by mistake"])
        refund = order["payment_history"][0]["amount"]
        b.add("cancel_pending_order", {"order_id": oid, "reason": reason}, {**order, "status": "cancelled"},
              write=True, confirm=f"I will cancel order {oid} with reason '{reason}'. Please confirm (yes) to proceed.")
        opening = f"Hi, I'd like to cancel my order {oid}; it was {reason}."
        if rng.random() < 0.6:
            info = [_num(refund)]
        ok = f"Order {oid} is cancelled. {_money(refund)} will be refunded to your original payment method."
        fail = f"Order {oid} is cancelled. Anything else I can do for you?"
        purpose = "Cancel a pending order and state the refund."
    elif template == "return":
        ret = items[: rng.randint(1, n_items)]
        amount = round(sum(i["price"] for i in ret), 2)
        args = {"order_id": oid, "item_ids": [i["item_id"] for i in ret], "payment_method_id": card}
        b.add("return_delivered_order_items", args, {**order, "status": "return requested"}, write=True,
              confirm=f"I will request a return of {', '.join(i['name'] for i in ret)} from order {oid}, refunded "
                      "to your credit card. Do you confirm (yes)?")
        opening = f"I received my order {oid} and want to return the {' and the '.join(i['name'] for i in ret)}."
        if rng.random() < 0.6:
            info = [_num(amount)]
        ok = f"Your return is requested; you will receive {_money(amount)} once the items arrive."
        fail = "Your return is requested; you'll get an email with the return label."
        purpose = "Return delivered items to the original payment method."
    elif template == "exchange":
        ex = items[: rng.randint(1, n_items)]
        new_ids = [str(rng.randint(1000000000, 9999999999)) for _ in ex]
        for it, new in zip(ex, new_ids, strict=True):
            b.add("get_product_details", {"product_id": it["product_id"]},
                  {"name": it["name"], "product_id": it["product_id"],
                   "variants": {new: {"item_id": new, "available": True, "price": it["price"]}}})
        args = {"order_id": oid, "item_ids": [i["item_id"] for i in ex], "new_item_ids": new_ids,
                "payment_method_id": card}
        b.add("exchange_delivered_order_items", args, {**order, "status": "exchange requested"}, write=True,
              confirm=f"I will exchange {len(ex)} item(s) in order {oid} for the variants you chose. Confirm (yes)?")
        opening = f"I'd like to exchange the {ex[0]['name']} from my order {oid} for a different variant."
        ok = fail = "The exchange is requested. You will receive an email with instructions to send the items back."
        purpose = "Exchange delivered items for available variants."
    elif template == "address":
        new = _address(rng)
        args = {"order_id": oid, **new}
        b.add("modify_pending_order_address", args, {**order, "address": new}, write=True,
              confirm=f"I will change the shipping address of {oid} to {new['address1']}, {new['city']}. Confirm?")
        opening = f"Please change the shipping address of my order {oid}; I have moved to {new['city']}."
        if rng.random() < 0.3:
            info = [new["zip"]]
        ok = f"The shipping address of {oid} is now {new['address1']}, {new['city']} {new['state']} {new['zip']}."
        fail = f"The shipping address of {oid} has been updated."
        purpose = "Modify the address of a pending order."
    elif template == "info_balance":
        balance = round(rng.uniform(10, 400), 2)
        brand = rng.choice(["mastercard", "visa", "amex"])
        b.add("get_user_details", {"user_id": uid},
              {"user_id": uid, "name": {"first_name": first, "last_name": last}, "address": addr, "email": email,
               "payment_methods": {card: {"source": "credit_card", "brand": brand, "last_four": card[-4:],
                                          "id": card},
                                   f"gift_card_{card[-7:]}": {"source": "gift_card", "balance": balance}},
               "orders": [oid]})
        opening = "Hi! What is my gift card balance, and which card did I use for my last order?"
        info = [_num(balance), brand]
        ok = (f"Your gift card balance is {_money(balance)}, and your last order was paid with your "
              f"{brand.capitalize()} card ending in {card[-4:]}.")
        fail = "I can see your gift card and your saved credit card on the account."
        purpose = "Answer questions about the user's payment methods."
    else:  # refuse
        opening = f"I want to return the items from order {oid} right away."
        ok = fail = f"I'm sorry, order {oid} has not been delivered yet, so it cannot be returned."
        purpose = "Agent must refuse to return an order that is not delivered."
    return {"template": template, "builder": b, "info": info, "opening": opening, "ask": ask, "reply": reply,
            "ok": ok, "fail": fail, "extra": extra, "transfer": False, "purpose": purpose, "known": known,
            "reason": opening, "extra_summary": f"Order {oid} has been cancelled as requested."}


def _make_task(domain: str, idx: int, seed: int) -> _Task:
    rng = random.Random(f"tauk-synth/task/{seed}/{domain}/{idx}")
    difficulty = rng.gauss(0.0, DIFFICULTY_SD)
    task_id = str(idx)
    comma = (domain, idx) == COMMA_TASK
    null_criteria = (domain, idx) == NULL_CRITERIA_TASK
    if domain == "airline":
        t = _airline_task(task_id, rng, comma)
    elif domain == "retail":
        t = _retail_task(task_id, rng)
    else:
        raise ValueError(f"unsupported domain {domain!r}; choose from {SUPPORTED_DOMAINS}")
    golds: list[_Gold] = t["builder"].golds
    basis = ["DB", "COMMUNICATE", "ACTION"] if (golds and rng.random() < 0.2) else ["DB", "COMMUNICATE"]
    criteria = None if null_criteria else {
        "actions": [g.action for g in golds],
        "env_assertions": None,
        "communicate_info": list(t["info"]),
        "nl_assertions": None,
        "reward_basis": basis,
    }
    definition = {
        "id": task_id,
        "description": {"purpose": t["purpose"], "relevant_policies": None, "notes": "synthetic (tauk synth)"},
        "user_scenario": {"persona": None, "instructions": {
            "domain": domain, "reason_for_call": t["reason"], "known_info": t["known"], "unknown_info": None,
            "task_instructions": "Be polite and concise. Confirm actions when asked."}},
        "ticket": None,
        "initial_state": None,
        "evaluation_criteria": criteria,
    }
    return _Task(id=task_id, domain=domain, template=t["template"], difficulty=difficulty, golds=golds,
                 communicate_info=list(t["info"]) if criteria else [], reward_basis=basis,
                 has_criteria=criteria is not None, impossible=comma, opening=t["opening"],
                 ask_identity=t["ask"], identity_reply=t["reply"], summary_ok=t["ok"], summary_fail=t["fail"],
                 extra_write=t["extra"], extra_summary=t["extra_summary"], definition=definition,
                 transfer=t["transfer"])


def _make_tasks(domain: str, n_tasks: int, seed: int) -> list[_Task]:
    return [_make_task(domain, i, seed) for i in range(n_tasks)]


# ---------------------------------------------------------------------------------------------------------------
# Agents and true probabilities
# ---------------------------------------------------------------------------------------------------------------


def _agent_levels(agents: Mapping[str, float] | Sequence[str] | str) -> dict[str, float]:
    if isinstance(agents, str):
        agents = [agents]
    if isinstance(agents, Mapping):
        levels = {str(k): float(v) for k, v in agents.items()}
    else:
        names = [str(a) for a in agents]
        n = len(names)
        levels = {a: (round(0.8 - 0.5 * i / (n - 1), 6) if n > 1 else 0.65) for i, a in enumerate(names)}
    if not levels:
        raise ValueError("at least one agent is needed")
    for a, q in levels.items():
        if not 0.0 < q < 1.0:
            raise ValueError(f"agent {a!r}: level must be a probability strictly between 0 and 1, got {q}")
        if not a or "/" in a or "\\" in a:
            raise ValueError(f"agent name {a!r} cannot be used in a file name")
    return levels


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _p(level: float, task: _Task) -> float:
    if task.impossible:
        return 0.0
    return _sigmoid(math.log(level / (1.0 - level)) - task.difficulty)


def true_success_probabilities(agents: Mapping[str, float] | Sequence[str] = SAMPLE_AGENTS,
                               domains: Sequence[str] = SAMPLE_DOMAINS, n_tasks: int = 50,
                               seed: int = 0) -> pl.DataFrame:
    """The true per-(agent, task) success probability used by :func:`synthesize` with the same arguments.

    ``p = sigmoid(logit(level) - difficulty)``; the always-failing comma task has ``p = 0``. ``p`` is the probability
    of reward 1 for a trial that is not an infrastructure error. Columns: agent, domain, task_id, level, skill,
    difficulty, p.
    """
    levels = _agent_levels(agents)
    rows: dict[str, list] = {k: [] for k in ("agent", "domain", "task_id", "level", "skill", "difficulty", "p")}
    for domain in _domains(domains):
        tasks = _make_tasks(domain, n_tasks, seed)
        for agent, level in levels.items():
            for t in tasks:
                rows["agent"].append(agent)
                rows["domain"].append(domain)
                rows["task_id"].append(t.id)
                rows["level"].append(level)
                rows["skill"].append(math.log(level / (1 - level)))
                rows["difficulty"].append(t.difficulty)
                rows["p"].append(_p(level, t))
    return pl.DataFrame(rows, schema={"agent": pl.String, "domain": pl.String, "task_id": pl.String,
                                      "level": pl.Float64, "skill": pl.Float64, "difficulty": pl.Float64,
                                      "p": pl.Float64})


def _domains(domains: Sequence[str] | str) -> list[str]:
    ds = [domains] if isinstance(domains, str) else list(domains)
    for d in ds:
        if d not in SUPPORTED_DOMAINS:
            raise ValueError(f"unsupported domain {d!r}; choose from {SUPPORTED_DOMAINS}")
    if len(set(ds)) != len(ds):
        raise ValueError(f"duplicate domains in {ds}")
    return ds


# ---------------------------------------------------------------------------------------------------------------
# Kernel (SPEC §2) used to derive the recorded checks from the constructed trajectory
# ---------------------------------------------------------------------------------------------------------------


def _call_matches(args: dict[str, Any], name: str, gold: dict[str, Any]) -> bool:
    if name != gold["name"]:
        return False
    keys = args.keys() if gold["compare_args"] is None else gold["compare_args"]
    if not keys:
        return True
    return ({k: v for k, v in args.items() if k in keys}
            == {k: v for k, v in gold["arguments"].items() if k in keys})


def _canon(name: str, args: dict[str, Any]) -> bytes:
    return orjson.dumps([name, args], option=orjson.OPT_SORT_KEYS)


# ---------------------------------------------------------------------------------------------------------------
# Trajectories
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class _Call:
    name: str
    args: dict[str, Any]
    result: str
    error: bool
    is_write: bool
    confirm: str | None = None
    lead: str | None = None


def _mutate(v: Any, rng: random.Random) -> Any:
    """A value that differs from ``v`` under JSON equality."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + rng.choice([1, 2, -1])
    if isinstance(v, float):
        return round(v + 1.5, 2)
    if isinstance(v, str):
        if v and v[-1].isdigit():
            return v[:-1] + str((int(v[-1]) + rng.randint(1, 9)) % 10)
        alt = [c for c in ("economy", "business", "basic_economy", "no longer needed", "ordered by mistake")
               if c != v]
        return rng.choice(alt) if v in ("economy", "business", "basic_economy", "no longer needed",
                                        "ordered by mistake") else v + " (updated)"
    if isinstance(v, list):
        if len(v) >= 2 and v[0] != v[-1]:
            return list(reversed(v))  # list order matters
        return [_mutate(v[0], rng), *v[1:]] if v else ["unknown"]
    if isinstance(v, dict):
        if not v:
            return {"unknown": True}
        k = sorted(v)[0]
        return {**v, k: _mutate(v[k], rng)}
    return "unknown"


def _break_gold(g: _Gold, rng: random.Random) -> _Call | None:
    """A call for gold ``g`` that does not match it (None = the call is omitted)."""
    a = g.action
    ca = a["compare_args"]
    if ca == [] or rng.random() < 0.25:
        return None
    keys = [k for k in (ca if ca is not None else sorted(a["arguments"])) if k in a["arguments"]]
    args = dict(a["arguments"])
    if keys and (ca is not None or rng.random() < 0.75):
        k = rng.choice(keys)
        args[k] = _mutate(args[k], rng)
    else:  # compare_args None: an extra argument fails the match
        args["note"] = "requested by customer"
    if g.is_write:
        return _Call(a["name"], args, g.result, False, True, g.confirm, g.lead)
    return _Call(a["name"], args, f"Error: {a['name'].replace('_', ' ')} found nothing for these arguments", True,
                 False, None, g.lead)


def _plan_calls(task: _Task, action_fail: bool, db_fail: bool, diag: bool, extra_write: bool,
                rng: random.Random) -> list[_Call]:
    calls: list[_Call | None] = [_Call(g.action["name"], dict(g.action["arguments"]), g.result, False, g.is_write,
                                       g.confirm, g.lead) for g in task.golds]
    if action_fail and task.golds:
        i = rng.randrange(len(task.golds))
        calls[i] = _break_gold(task.golds[i], rng)
    if db_fail:
        writes = [i for i, g in enumerate(task.golds) if g.is_write]
        if writes and not extra_write:
            i = rng.choice(writes)
            g = task.golds[i]
            if rng.random() < 0.3:
                calls[i] = None  # the agent never made the change
            else:
                args = dict(g.action["arguments"])
                k = rng.choice(sorted(args))
                args[k] = _mutate(args[k], rng)
                calls[i] = _Call(g.action["name"], args, g.result, False, True, g.confirm, g.lead)
        else:
            extra_write = True
    if diag:
        reads = [i for i, g in enumerate(task.golds) if not g.is_write]
        if reads:
            i = rng.choice(reads)
            calls[i] = _break_gold(task.golds[i], rng)
    out = [c for c in calls if c is not None]
    if extra_write:
        name, args, result = task.extra_write
        out.append(_Call(name, args, result, False, True,
                         "I can take care of that right away. Shall I proceed (yes)?", None))
    return out


_RAW_ROLES = {"all": ("user", "assistant"), "user": ("user",), "none": ()}


class _Conversation:
    """Builds the message list: turn_idx, timestamps, costs, usage and raw_data."""

    def __init__(self, rng: random.Random, start_us: int, base: datetime, prices: tuple[float, float],
                 payload_bytes: int, pad: _Padding, raw_data: str = "all"):
        self.rng, self.t, self.base, self.prices = rng, start_us, base, prices
        self.payload, self.pad, self.raw_roles = payload_bytes, pad, _RAW_ROLES[raw_data]
        self.msgs: list[dict[str, Any]] = []
        self.agent_cost = 0.0
        self.user_cost = 0.0

    def _ts(self, dt_s: float) -> str:
        self.t += int(dt_s * 1e6)
        return (self.base + timedelta(microseconds=self.t)).strftime("%Y-%m-%dT%H:%M:%S.%f")

    def _raw(self, content: str | None, tool_calls: list[dict] | None, finish: str) -> dict[str, Any]:
        tc = None if not tool_calls else [
            {"function": {"arguments": _dumps(c["arguments"]), "name": c["name"]}, "id": c["id"], "type": "function"}
            for c in tool_calls]
        raw: dict[str, Any] = {"finish_reason": finish, "index": 0,
                               "message": {"content": content, "role": "assistant", "tool_calls": tc,
                                           "function_call": None, "provider_specific_fields": {"refusal": None},
                                           "annotations": []},
                               "provider_specific_fields": {}}
        if self.payload > 0:
            n = self.payload - len(orjson.dumps(raw)) - len(',"reasoning_content":"","logprobs":{"content":[]}')
            if n > 0:  # what makes real raw_data large: reasoning text and per-token logprobs (the mix gives
                # about the parse cost per byte of real results files: orjson ~15 ms/MB)
                lp = self.pad.logprobs(n // 5)
                raw["logprobs"] = {"content": lp}
                raw["message"]["reasoning_content"] = self.pad.pool[: max(0, n - len(orjson.dumps(lp)))]
        return raw

    def greeting(self) -> None:
        self.msgs.append({"role": "assistant", "content": GREETING, "tool_calls": None, "turn_idx": 0,
                          "timestamp": self._ts(0.05), "cost": 0.0, "usage": None, "raw_data": None})

    def _llm(self, role: str, content: str | None, tool_calls: list[dict] | None) -> None:
        i = len(self.msgs)
        if role == "assistant":
            prompt = 3000 + 85 * i + self.rng.randint(0, 60)
            pin, pout = self.prices
        else:
            prompt = 400 + 45 * i + self.rng.randint(0, 30)
            pin, pout = 0.4e-6, 1.6e-6
        completion = (len(content) // 4 if content else 0) + 12 * len(tool_calls or []) + self.rng.randint(3, 12)
        cost = prompt * pin + completion * pout
        if role == "assistant":
            self.agent_cost += cost
        else:
            self.user_cost += cost
        self.msgs.append({"role": role, "content": content, "tool_calls": tool_calls, "turn_idx": i,
                          "timestamp": self._ts(self.rng.uniform(0.6, 3.5)), "cost": cost,
                          "usage": {"completion_tokens": completion, "prompt_tokens": prompt},
                          "raw_data": self._raw(content, tool_calls, "tool_calls" if tool_calls else "stop")
                          if role in self.raw_roles else None})

    def user(self, content: str) -> None:
        self._llm("user", content, None)

    def assistant(self, content: str | None, tool_calls: list[dict] | None = None) -> None:
        self._llm("assistant", content, tool_calls)

    def call(self, name: str, args: dict[str, Any], lead: str | None = None) -> str:
        cid = "call_" + "".join(self.rng.choices(_ALNUM, k=24))
        self.assistant(lead, [{"id": cid, "name": name, "arguments": args, "requestor": "assistant"}])
        return cid

    def tool(self, cid: str, content: str, error: bool) -> None:
        self.msgs.append({"id": cid, "role": "tool", "content": content, "requestor": "assistant", "error": error,
                          "turn_idx": len(self.msgs), "timestamp": self._ts(self.rng.uniform(0.0002, 0.002))})


class _Padding:
    """Deterministic filler text for raw_data (payload_bytes)."""

    def __init__(self, seed: int):
        self.pool = base64.b64encode(hashlib.shake_256(f"tauk-synth/pad/{seed}".encode()).digest(3 << 16)).decode()
        self.pos = 0

    def logprobs(self, n: int) -> list[dict[str, Any]]:
        """About ``n`` bytes of OpenAI-style ``logprobs.content`` entries (token, logprob, bytes, top_logprobs)."""
        if not hasattr(self, "_entries"):
            words = self.pool[:1 << 16]
            self._entries, self._sizes = [], []
            for i in range(0, len(words) - 8, 5):
                tok = words[i:i + 1 + i % 7]
                top = [{"token": words[i + j:i + j + 3], "logprob": -round(0.37 * j + (i % 97) / 97, 6),
                        "bytes": list(words[i + j:i + j + 3].encode())} for j in range(1, 3)]
                e = {"token": tok, "logprob": -round((i % 997) / 331, 6), "bytes": list(tok.encode()),
                     "top_logprobs": top}
                self._entries.append(e)
                self._sizes.append(len(orjson.dumps(e)) + 1)
        out, size, k = [], 0, self.pos % len(self._entries)
        while size + self._sizes[k] <= n:
            out.append(self._entries[k])
            size += self._sizes[k]
            k = (k + 1) % len(self._entries)
        self.pos = (self.pos + len(out) * 7 + 1) % (1 << 30)
        return out



_CLOSINGS = ["Thank you, that's all I needed. ###STOP###", "Great, thanks for your help! ###STOP###",
             "Perfect, that's everything. Have a nice day! ###STOP###"]
_CONFIRMS = ["Yes, please go ahead.", "Yes, that's correct. Please proceed.", "Yes."]


def _normal_messages(conv: _Conversation, task: _Task, calls: list[_Call], communicate_ok: bool,
                     agent_stop: bool) -> None:
    rng = conv.rng
    conv.greeting()
    conv.user(task.opening)
    conv.assistant(task.ask_identity)
    conv.user(task.identity_reply)
    for c in calls:
        if c.is_write and c.confirm:
            conv.assistant(c.confirm)
            conv.user(rng.choice(_CONFIRMS))
        cid = conv.call(c.name, c.args, c.lead if rng.random() < 0.5 else None)
        conv.tool(cid, c.result, c.error)
        if c.error:
            conv.assistant("I could not find anything with those details; let me try to continue with what I have.")
    summary = task.summary_ok if communicate_ok else task.summary_fail
    if calls and calls[-1].name == task.extra_write[0] and calls[-1].args == task.extra_write[1] \
            and not any(g.action["name"] == task.extra_write[0] for g in task.golds):
        # the agent made an unwanted change: it says so (a refusal task's refusal no longer applies)
        summary = task.extra_summary if task.template == "refuse" else f"{summary} {task.extra_summary}"
    conv.assistant(summary)
    if task.transfer:
        conv.user("###TRANSFER###")
    elif not agent_stop:
        conv.user(rng.choice(_CLOSINGS))


def _premature_messages(conv: _Conversation, task: _Task, reason: str, max_steps: int, max_errors: int) -> None:
    rng = conv.rng
    conv.greeting()
    conv.user(task.opening)
    conv.assistant(task.ask_identity)
    conv.user(task.identity_reply)
    gold = task.golds[0].action if task.golds else {"name": "get_user_details", "arguments": {"user_id": "unknown"}}
    if reason == "too_many_errors":
        for _ in range(max_errors):
            args = {k: _mutate(v, rng) for k, v in gold["arguments"].items()}
            cid = conv.call(gold["name"], args)
            conv.tool(cid, f"Error: invalid arguments for {gold['name']}", True)
        return
    # max_steps: the agent and the user go round in circles until the step budget is spent
    while len(conv.msgs) < max_steps:
        if len(conv.msgs) % 4 == 0:
            cid = conv.call(gold["name"], dict(gold["arguments"]))
            conv.tool(cid, task.golds[0].result if task.golds else "{}", False)
        else:
            conv.assistant("Could you please confirm those details once more?")
            conv.user("I already gave you my details. " + task.identity_reply)
    del conv.msgs[max_steps:]


def _reward_info(task: _Task, msgs: list[dict[str, Any]], calls: list[_Call]) -> dict[str, Any]:
    """Recorded reward_info for a trial that ended normally (user_stop / agent_stop)."""
    if not task.has_criteria:
        return {"reward": 1.0, "db_check": None, "env_assertions": None, "action_checks": None,
                "nl_assertions": None, "communicate_checks": None, "reward_basis": None, "reward_breakdown": None,
                "info": {"note": "No evaluation criteria"}}
    gold_writes = sorted(_canon(g.action["name"], g.action["arguments"]) for g in task.golds if g.is_write)
    made_writes = sorted(_canon(c.name, c.args) for c in calls if c.is_write)
    db = 1.0 if gold_writes == made_writes else 0.0
    texts = [m["content"] for m in msgs if m["role"] == "assistant" and m["content"] and m["content"].strip()]
    comm_checks = None
    comm = 1.0
    if task.communicate_info:
        comm_checks = []
        for s in task.communicate_info:
            hit = next((t for t in texts if s.lower() in t.lower().replace(",", "")), None)
            comm_checks.append({"info": s, "met": hit is not None, "justification":
                                f"Information '{s}' communicated in the message:\n '{hit}'" if hit is not None
                                else f"Information '{s}' not communicated."})
        comm = 1.0 if all(c["met"] for c in comm_checks) else 0.0
    made = [(tc["name"], tc["arguments"]) for m in msgs for tc in (m.get("tool_calls") or [])]
    action_checks = None
    act = 1.0
    if task.golds:
        action_checks = []
        for g in task.golds:
            ok = any(_call_matches(args, name, g.action) for name, args in made)
            action_checks.append({"action": g.action, "action_match": ok, "action_reward": 1.0 if ok else 0.0})
        act = 1.0 if all(c["action_match"] for c in action_checks) else 0.0
    values = {"DB": db, "COMMUNICATE": comm, "ACTION": act}
    breakdown = {k: values[k] for k in task.reward_basis}
    reward = 1.0
    for v in breakdown.values():
        reward *= v
    return {"reward": reward, "db_check": {"db_match": db == 1.0, "db_reward": db}, "env_assertions": None,
            "action_checks": action_checks, "nl_assertions": None, "communicate_checks": comm_checks,
            "reward_basis": list(task.reward_basis), "reward_breakdown": breakdown, "info": None}


@dataclass
class _Options:
    infra_error_rate: float
    premature_rate: float
    diagnostic_rate: float
    agent_stop_rate: float
    max_steps: int
    max_errors: int
    payload_bytes: int
    raw_data: str = "all"


def _simulation(task: _Task, agent: str, level: float, trial: int, trial_seed: int, opts: _Options,
                u: list[float], start_us: int, base: datetime, pad: _Padding,
                seed: int) -> tuple[dict[str, Any], int]:
    """One SimulationRun; ``u`` are the outcome uniforms (drawn independently of the content)."""
    rng = random.Random(f"tauk-synth/content/{seed}/{agent}/{task.domain}/{task.id}/{trial}")
    sim_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    mult = 0.5 + 1.5 * level
    conv = _Conversation(rng, start_us, base, (2e-6 * mult, 8e-6 * mult), opts.payload_bytes, pad, opts.raw_data)
    infra = u[0] < opts.infra_error_rate
    success = u[1] < _p(level, task)
    reward_info: dict[str, Any] | None
    if infra:
        conv.greeting()
        conv.user(task.opening)
        termination = "infrastructure_error"
        reward_info = None
    elif not success and (u[2] < opts.premature_rate or not task.has_criteria):
        termination = "max_steps" if u[3] < 0.6 else "too_many_errors"
        _premature_messages(conv, task, termination, opts.max_steps, opts.max_errors)
        reward_info = {"reward": 0.0, "db_check": None, "env_assertions": None, "action_checks": None,
                       "nl_assertions": None, "communicate_checks": None,
                       "reward_basis": list(task.reward_basis) if task.has_criteria else None,
                       "reward_breakdown": None,
                       "info": {"note": f"Simulation terminated prematurely. Termination reason: {termination}"}}
    else:
        agent_stop = not task.transfer and u[5] < opts.agent_stop_rate
        termination = "agent_stop" if agent_stop else "user_stop"
        fails: set[str] = set()
        if not success:
            avail = ["DB"]
            if task.communicate_info:
                avail.append("COMMUNICATE")
            if "ACTION" in task.reward_basis and task.golds:
                avail.append("ACTION")
            fails.add(avail[int(u[3] * len(avail))])
            if u[4] < 0.2:
                fails.add(avail[int(u[4] * 5 * len(avail)) % len(avail)])
        diag = success and "ACTION" not in task.reward_basis and u[4] < opts.diagnostic_rate
        extra_write = False
        for _attempt in range(2):
            calls = _plan_calls(task, "ACTION" in fails, "DB" in fails, diag, extra_write, rng)
            conv.msgs.clear()
            conv.agent_cost = conv.user_cost = 0.0
            _normal_messages(conv, task, calls, "COMMUNICATE" not in fails, agent_stop)
            reward_info = _reward_info(task, conv.msgs, calls)
            if success or reward_info["reward"] == 0.0:
                break
            extra_write = True  # a planned failure did not show (an accidental match): fail DB for sure
            fails.add("DB")
        assert reward_info is not None
        if success != (reward_info["reward"] == 1.0):  # pragma: no cover - construction guarantees it
            raise AssertionError(f"synth: task {task.id} trial {trial}: planned success={success}, "
                                 f"got reward {reward_info['reward']}")
    msgs = conv.msgs
    start = (base + timedelta(microseconds=start_us)).strftime("%Y-%m-%dT%H:%M:%S.%f")
    end_us = conv.t + int(rng.uniform(0.0001, 0.001) * 1e6)
    end = (base + timedelta(microseconds=end_us)).strftime("%Y-%m-%dT%H:%M:%S.%f")
    conv.t = end_us
    return {
        "id": sim_id,
        "task_id": task.id,
        "timestamp": conv._ts(0.00002),
        "start_time": start,
        "end_time": end,
        "duration": (end_us - start_us) / 1e6,
        "termination_reason": termination,
        "agent_cost": conv.agent_cost,
        "user_cost": conv.user_cost,
        "reward_info": reward_info,
        "messages": msgs,
        "trial": trial,
        "seed": trial_seed,
    }, conv.t


def _header(agent: str, domain: str, tasks: list[_Task], n_trials: int, seed: int, opts: _Options,
            base: datetime) -> dict[str, Any]:
    commit = hashlib.sha1(f"tauk-synth/{seed}".encode()).hexdigest()
    return {
        "timestamp": base.strftime("%Y-%m-%dT%H:%M:%S.%f"),
        "info": {
            "git_commit": commit,
            "num_trials": n_trials,
            "max_steps": opts.max_steps,
            "max_errors": opts.max_errors,
            "user_info": {"implementation": "user_simulator", "llm": USER_MODEL, "llm_args": {"temperature": 0.0},
                          "global_simulation_guidelines": _GUIDELINES},
            "agent_info": {"implementation": "llm_agent", "llm": agent, "llm_args": {"temperature": 0.0}},
            "environment_info": {"domain_name": domain,
                                 "policy": _AIRLINE_POLICY if domain == "airline" else _RETAIL_POLICY,
                                 "tool_defs": None},
            "seed": seed,
        },
        "tasks": [t.definition for t in tasks],
    }


def _base_time(seed: int) -> datetime:
    h = int.from_bytes(hashlib.sha256(f"tauk-synth/time/{seed}".encode()).digest()[:8], "big")
    return datetime(2025, 1, 1) + timedelta(seconds=h % (365 * 86400), microseconds=h % 1_000_000)


def _iter_runs(agents: Mapping[str, float] | Sequence[str], domains: Sequence[str], n_tasks: int, n_trials: int,
               seed: int, opts: _Options) -> Iterator[tuple[str, str, dict[str, Any], Iterator[dict[str, Any]]]]:
    """Yields (agent, domain, header, simulations iterator) per results file."""
    if n_tasks < 1 or n_trials < 1:
        raise ValueError("n_tasks and n_trials must be >= 1")
    if not 0.0 <= opts.infra_error_rate <= 1.0:
        raise ValueError("infra_error_rate must lie in [0, 1]")
    if opts.raw_data not in _RAW_ROLES:
        raise ValueError(f"raw_data must be one of {sorted(_RAW_ROLES)}, got {opts.raw_data!r}")
    if opts.payload_bytes < 0:
        raise ValueError("payload_bytes must be >= 0")
    levels = _agent_levels(agents)
    domains = _domains(domains)
    trial_rng = random.Random(seed)
    trial_seeds = [trial_rng.randint(0, 1_000_000) for _ in range(n_trials)]
    for di, domain in enumerate(domains):
        tasks = _make_tasks(domain, n_tasks, seed)
        for ai, (agent, level) in enumerate(levels.items()):
            base = _base_time(seed) + timedelta(hours=6 * (di * len(levels) + ai))
            header = _header(agent, domain, tasks, n_trials, seed, opts, base)

            def sims(agent: str = agent, level: float = level, domain: str = domain, tasks: list = tasks,
                     base: datetime = base) -> Iterator[dict[str, Any]]:
                orng = random.Random(f"tauk-synth/outcome/{seed}/{agent}/{domain}")
                pad = _Padding(seed)
                t_us = 500_000
                for trial in range(n_trials):
                    for task in tasks:
                        u = [orng.random() for _ in range(6)]
                        sim, t_us = _simulation(task, agent, level, trial, trial_seeds[trial], opts, u, t_us, base,
                                                pad, seed)
                        t_us += 150_000
                        yield sim

            yield agent, domain, header, sims()


def synthesize(agents: Mapping[str, float] | Sequence[str] = SAMPLE_AGENTS,
               domains: Sequence[str] = ("airline", "retail"), n_tasks: int = 50, n_trials: int = 4, seed: int = 0,
               *, infra_error_rate: float = 0.0, premature_rate: float = 0.12, diagnostic_rate: float = 0.2,
               agent_stop_rate: float = 0.05, max_steps: int = 50, max_errors: int = 10,
               payload_bytes: int = 0, raw_data: str = "all") -> list[dict[str, Any]]:
    """Synthetic τ²-bench results: one results dict per agent × domain (domain-major order).

    ``agents``: a mapping name → level (the success probability on a task of median difficulty, in (0, 1)), or a
    sequence of names (levels spread evenly from 0.8 down to 0.3). True probabilities:
    :func:`true_success_probabilities` with the same ``agents, domains, n_tasks, seed``.
    ``premature_rate``: share of failing trials that end with ``max_steps`` / ``too_many_errors``;
    ``diagnostic_rate``: share of successful trials (whose basis lacks ACTION) that fail the ACTION check anyway;
    ``infra_error_rate``: share of simulations with ``infrastructure_error`` and ``reward_info: null``;
    ``payload_bytes``: pad every LLM message's ``raw_data`` to about that many bytes (0: no padding);
    ``raw_data``: which messages carry a provider ``raw_data`` dict: ``"all"`` (user and assistant), ``"user"``
    (as in some v1.0 files) or ``"none"``.
    """
    opts = _Options(infra_error_rate, premature_rate, diagnostic_rate, agent_stop_rate, max_steps, max_errors,
                    payload_bytes, raw_data)
    out = []
    for _agent, _domain, header, sims in _iter_runs(agents, domains, n_tasks, n_trials, seed, opts):
        out.append({**header, "simulations": list(sims), "simulation_index": None})
    return out


# ---------------------------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------------------------


def _write_stream(path: Path, header: dict[str, Any], sims: Iterator[dict[str, Any]]) -> None:
    """Write ``{**header, "simulations": [...], "simulation_index": null}`` one simulation at a time.

    The bytes equal ``orjson.dumps(whole)`` (compact JSON; checked by the tests) without holding the file in memory.
    Written to a temporary name first, then renamed.
    """
    head = orjson.dumps({**header, "simulations": None})
    assert head.endswith(b'"simulations":null}')
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(head[: -len(b"null}")])
        f.write(b"[")
        for i, sim in enumerate(sims):
            if i:
                f.write(b",")
            f.write(orjson.dumps(sim))
        f.write(b'],"simulation_index":null}')
    tmp.replace(path)


def write_results(out_dir: str | Path, agents: Mapping[str, float] | Sequence[str] = SAMPLE_AGENTS,
                  domains: Sequence[str] = ("airline", "retail"), n_tasks: int = 50, n_trials: int = 4,
                  seed: int = 0, *, infra_error_rate: float = 0.0, premature_rate: float = 0.12,
                  diagnostic_rate: float = 0.2, agent_stop_rate: float = 0.05, max_steps: int = 50,
                  max_errors: int = 10, payload_bytes: int = 0, raw_data: str = "all") -> list[Path]:
    """Write one ``<agent>_<domain>.json`` per agent × domain into ``out_dir`` (same arguments as
    :func:`synthesize`, whose dicts the files hold). Returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    opts = _Options(infra_error_rate, premature_rate, diagnostic_rate, agent_stop_rate, max_steps, max_errors,
                    payload_bytes, raw_data)
    paths = []
    for agent, domain, header, sims in _iter_runs(agents, domains, n_tasks, n_trials, seed, opts):
        p = out / f"{agent}_{domain}.json"
        _write_stream(p, header, sims)
        paths.append(p)
    return paths


def write_corpus(path: str | Path, n_simulations: int = 12500, payload_bytes: int = 1000, seed: int = 0, *,
                 agent: str = "atlas-large", level: float = 0.6, domain: str = "airline", n_tasks: int = 50,
                 infra_error_rate: float = 0.01) -> Path:
    """One big results file for benchmarks: ``n_tasks`` tasks × ceil(n_simulations / n_tasks) trials
    (so at least ``n_simulations`` simulations). The defaults make a file of about 200 MB whose messages carry
    raw_data of the size and parse cost per byte of real results files (about 1 kB each)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    n_tasks = max(1, min(n_tasks, n_simulations))
    n_trials = max(1, math.ceil(n_simulations / n_tasks))
    opts = _Options(infra_error_rate, 0.12, 0.2, 0.05, 50, 10, payload_bytes)
    for _a, _d, header, sims in _iter_runs({agent: level}, [domain], n_tasks, n_trials, seed, opts):
        _write_stream(p, header, sims)
    return p


def _sample_readme() -> str:
    agents = ", ".join(f"`{a}` (level {q})" for a, q in SAMPLE_AGENTS.items())
    return (
        "# Bundled sample data (synthetic)\n\n"
        "These files are **generated** by `tauk synth --sample` (equivalently\n"
        "`python -c \"from tauk.synth import write_sample; write_sample('data')\"`) with seed "
        f"`{SAMPLE_SEED}`. Do not edit them by hand: `tests/test_synth.py` regenerates them and checks the bytes.\n\n"
        f"- agents: {agents}\n"
        f"- domains: {', '.join(SAMPLE_DOMAINS)}; {SAMPLE_N_TASKS} tasks per domain, {SAMPLE_N_TRIALS} trials\n"
        "- one τ²-bench monolithic results file per agent × domain: `<agent>_<domain>.json`\n"
        "- `raw_data` (the provider response) is kept on user-simulator messages only, to keep the files small\n\n"
        "The true per-task success probabilities are known:\n\n"
        "```python\n"
        "from tauk.synth import true_success_probabilities, SAMPLE_AGENTS, SAMPLE_DOMAINS, SAMPLE_N_TASKS, SAMPLE_SEED\n"
        "true_success_probabilities(SAMPLE_AGENTS, SAMPLE_DOMAINS, SAMPLE_N_TASKS, SAMPLE_SEED)\n"
        "```\n\n"
        "p = sigmoid(logit(level) - difficulty); airline task `7` asks for a communicate string with a comma, which\n"
        "can never match (p = 0); retail task `5` has no evaluation criteria (reward 1 unless the trial ends early).\n"
        "Recorded rewards follow the τ²-bench scoring kernel exactly.\n"
    )


def write_sample(out_dir: str | Path = "data") -> list[Path]:
    """Write the project's bundled sample (3 agents × airline, retail × 25 tasks × 4 trials) and its README.md."""
    out = Path(out_dir)
    paths = write_results(out, SAMPLE_AGENTS, SAMPLE_DOMAINS, SAMPLE_N_TASKS, SAMPLE_N_TRIALS, SAMPLE_SEED,
                          raw_data=SAMPLE_RAW_DATA)
    readme = out / "README.md"
    readme.write_text(_sample_readme(), encoding="utf-8")
    return [*paths, readme]


# ---------------------------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------------------------


def _parse_agents(text: str) -> dict[str, float] | list[str]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if all("=" in p for p in parts):
        out: dict[str, float] = {}
        for p in parts:
            name, _, val = p.partition("=")
            try:
                out[name.strip()] = float(val)
            except ValueError:
                raise argparse.ArgumentTypeError(f"--agents: {p!r}: level must be a number") from None
        return out
    if any("=" in p for p in parts):
        raise argparse.ArgumentTypeError("--agents: give either all levels (a=0.7,b=0.5) or none (a,b)")
    return parts


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``synth`` subcommand on an ``argparse`` subparsers object (handler: ``args.func``)."""
    p = subparsers.add_parser(
        "synth", help="write seeded synthetic τ²-bench results",
        description="Write seeded synthetic τ²-bench results files (<agent>_<domain>.json) with known per-task "
                    "success probabilities. `tauk synth --sample` regenerates the bundled sample in data/.")
    p.add_argument("out_dir", nargs="?", default=None, help="output folder (with --sample: default data)")
    p.add_argument("--sample", action="store_true", help="write the bundled sample (fixed agents, seed, sizes)")
    p.add_argument("--agents", type=_parse_agents, default=None,
                   help="agents as name=level,... (level: success probability on a median task) or name,...")
    p.add_argument("--domains", default="airline,retail", help="comma-separated: airline,retail")
    p.add_argument("--tasks", type=int, default=50, help="tasks per domain (default 50)")
    p.add_argument("--trials", type=int, default=4, help="trials per task (default 4)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--payload-bytes", type=int, default=0, help="pad each message's raw_data to about this size")
    p.add_argument("--infra-error-rate", type=float, default=0.0, help="share of infrastructure_error simulations")
    p.set_defaults(func=_cli)
    return p


def _cli(args: argparse.Namespace) -> int:
    try:
        if args.sample:
            paths = write_sample(args.out_dir or "data")
        else:
            if args.out_dir is None:
                print("tauk synth: give OUT_DIR (or --sample)")
                return 2
            agents = args.agents if args.agents is not None else dict(SAMPLE_AGENTS)
            domains = [d.strip() for d in args.domains.split(",") if d.strip()]
            paths = write_results(args.out_dir, agents, domains, args.tasks, args.trials, args.seed,
                                  infra_error_rate=args.infra_error_rate, payload_bytes=args.payload_bytes)
    except ValueError as e:
        print(f"tauk synth: {e}")
        return 2
    total = 0
    for path in paths:
        size = path.stat().st_size
        total += size
        print(f"{path}  ({size:,} bytes)")
    print(f"wrote {len(paths)} files, {total:,} bytes")
    return 0
