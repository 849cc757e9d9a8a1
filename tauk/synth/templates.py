"""Task templates of the synthetic generator: the scenario text and the gold actions of airline and retail tasks.

Each template function draws a customer, the records the tools return and the gold actions (with their
``compare_args``, confirmation requests and results) from a seeded ``random.Random``, and returns what
:func:`tauk.synth.tasks.make_task` needs to build the task definition and the conversations. The draws are part of
the generator's output: changing their order changes every file (``data/`` is checked byte for byte).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["Gold", "GoldBuilder", "airline_task", "retail_task", "to_json"]

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


@dataclass
class Gold:
    """A gold action of a task, with what the conversation needs to perform it."""

    action: dict[str, Any]  # the gold action dict exactly as stored in the task
    is_write: bool  # changes the DB (DB check compares write calls)
    result: str  # tool message content answering the correct call
    confirm: str | None = None  # assistant confirmation request before a write
    lead: str | None = None  # optional assistant text carried with the tool call


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


def to_json(obj: Any) -> str:
    """Compact JSON text (as tool results and raw_data arguments are written)."""
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


class GoldBuilder:
    """Accumulates the gold actions of one task (ids ``<task>_<k>``, ``compare_args`` drawn unless given)."""

    def __init__(self, task_id: str, rng: random.Random):
        self.task_id, self.rng, self.golds = task_id, rng, []

    def add(self, name: str, args: dict[str, Any], result: Any, *, write: bool = False, confirm: str | None = None,
            lead: str | None = None, compare_args: Any = "auto") -> None:
        ca = _pick_compare(self.rng, args, write) if compare_args == "auto" else compare_args
        res = result if isinstance(result, str) else to_json(result)
        self.golds.append(Gold(_action(self.task_id, len(self.golds), name, args, ca), write, res, confirm, lead))


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


def airline_task(task_id: str, rng: random.Random, comma: bool) -> dict[str, Any]:
    """Draw an airline task: cancel, baggage, change_flight, compensation, info_total, transfer or refuse.

    ``comma`` forces ``info_total`` with a ``communicate_info`` string containing a thousands separator (a string
    that can never match). Returns the parts :func:`tauk.synth.tasks.make_task` assembles (template, gold builder,
    communicate_info, the conversation's lines, an unwanted write and its summary, purpose).
    """
    u = _airline_user(rng)
    rid = _rid(rng)
    cabin = rng.choice(_CABINS)
    res = _reservation(rng, rid, u, cabin, rng.randint(1, 3))
    b = GoldBuilder(task_id, rng)
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
    extra = ("cancel_reservation", {"reservation_id": rid}, to_json({**res, "status": "cancelled"}))
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


def retail_task(task_id: str, rng: random.Random) -> dict[str, Any]:
    """Draw a retail task: cancel_order, return, exchange, address, info_balance or refuse (as :func:`airline_task`).
    """
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
    b = GoldBuilder(task_id, rng)
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
             to_json({**order, "status": "cancelled"}))
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

