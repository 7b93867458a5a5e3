"""Who may act: station PIN or token, referee passwords, signed session cookies, a brake on guesses.

Reading is open on both pages (a tournament is public); acting is not. Choices:

* Token and password checks compare in constant time (:func:`hmac.compare_digest`), so the time
  an answer takes says nothing about how much of a guess was right.
* A station PIN is short, so :class:`Brake` slows guessing: after ``free`` failures from one
  client (an IPv6 client by its /64) every further try waits out a delay that doubles, up to
  ``longest`` seconds; after ``overall`` failures in an hour from anyone, everyone does.
* Referee passwords are stored as PBKDF2-SHA256 hashes (``tikiboard referee hash-password``),
  never in clear, in the dashboard's config file.
* A referee session is a cookie ``user|expiry|session|HMAC`` signed with the dashboard's
  secret (at least :data:`MIN_SECRET` bytes: an empty key would let anyone sign a cookie, so the
  signer refuses one). It is HttpOnly and SameSite=Strict, and every POST also carries a CSRF
  token derived from the cookie, so another site can neither read it nor make the referee's
  browser act. Logging out ends the session server-side: its random ``session`` id is kept
  (the dashboard's ledger, until the cookie would have expired anyway) and refused from then
  on, so a copied cookie dies with the log-out. HTTP basic auth was not chosen: browsers resend
  and cache the password with every request and there is no way to log out at a shared
  referee table.
* Hashing a password (PBKDF2, a tenth of a second on purpose) blocks whoever runs it, so web
  handlers call :func:`verify_password` in a worker thread, never on the event loop.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import hmac
import ipaddress
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

PBKDF2_ITERATIONS = 200_000
MIN_SECRET = 16
"""Bytes of the cookie signing key, at least (the dashboard makes 32)."""


def same(given: str | None, expected: str | None) -> bool:
    """Constant-time equality of two texts; False when either is missing or empty."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def hash_password(password: str, *, salt: bytes | None = None,
                  iterations: int = PBKDF2_ITERATIONS) -> str:
    """``pbkdf2_sha256$ITERATIONS$SALT$HASH`` (salt and hash in hex)."""
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    return f"pbkdf2_sha256${iterations}${salt.hex()}${digest.hex()}"


def verify_password(password: str, encoded: str) -> bool:
    try:
        scheme, iterations, salt, digest = encoded.split("$")
        if scheme != "pbkdf2_sha256":
            return False
        mine = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt),
                                   int(iterations))
    except ValueError:
        return False
    return hmac.compare_digest(mine.hex(), digest)


@dataclass(frozen=True)
class Session:
    """A verified referee session: who, its random id, and when its cookie expires."""

    user: str
    id: str
    expires: float


@dataclass(frozen=True)
class CookieSigner:
    """Signs ``user|expiry|session`` with HMAC-SHA256; :meth:`verify` gives the user back or None.

    ``ended``: session ids logged out (checked on every verify)."""

    secret: bytes
    ttl: float = 12 * 3600.0
    clock: Callable[[], float] = time.time
    ended: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.secret) < MIN_SECRET:
            raise ValueError(f"the cookie signing key has {len(self.secret)} bytes; it needs at "
                             f"least {MIN_SECRET} (an empty or short key lets anyone sign)")

    def _mac(self, text: str) -> str:
        mac = hmac.new(self.secret, text.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).decode().rstrip("=")

    def sign(self, user: str) -> str:
        name = base64.urlsafe_b64encode(user.encode()).decode().rstrip("=")
        body = f"{name}|{int(self.clock() + self.ttl)}|{secrets.token_urlsafe(16)}"
        return f"{body}|{self._mac(body)}"

    def session(self, cookie: str | None) -> Session | None:
        """The cookie's session if the signature holds, it has not expired nor been ended."""
        if not cookie or cookie.count("|") != 3:
            return None
        name, expiry, sid, mac = cookie.split("|")
        if not hmac.compare_digest(mac, self._mac(f"{name}|{expiry}|{sid}")):
            return None
        try:
            if int(expiry) < self.clock() or sid in self.ended:
                return None
            user = base64.urlsafe_b64decode(name + "=" * (-len(name) % 4)).decode()
        except (ValueError, UnicodeDecodeError):
            return None
        return Session(user, sid, float(expiry))

    def verify(self, cookie: str | None) -> str | None:
        found = self.session(cookie)
        return None if found is None else found.user

    def end(self, session: Session) -> None:
        """Refuse this session from now on (forgotten once its cookie expired anyway)."""
        now = self.clock()
        for sid in [s for s, t in self.ended.items() if t < now]:
            del self.ended[sid]
        self.ended[session.id] = session.expires

    def csrf(self, cookie: str) -> str:
        """The token a page must send back with every POST of this session."""
        return self._mac(f"csrf|{cookie}")


def peer_key(who: str) -> str:
    """The brakes' name for a client address: an IPv4 address as it is (an IPv4-mapped IPv6
    one too), an IPv6 address by its /64 (one home or phone gets a whole /64: keyed by the
    address, every guess could come from a fresh one), anything else as given."""
    try:
        address = ipaddress.ip_address(who.split("%", 1)[0])
    except ValueError:
        return who
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{address}/64", strict=False))
    return str(address)


@dataclass
class Brake:
    """Failed attempts per client (:func:`peer_key`), and in all: a growing wait after
    ``free`` failures of one client, and for everyone after ``overall`` failures within
    ``window`` seconds from any clients.

    The overall budget is what holds against many addresses (issue 29: each new source
    address got five fresh guesses; over IPv6 one client has 2**64 of them). Its cost is that
    a guesser slows the page's actions for everyone while they guess; the station's buttons,
    at the table, never wait."""

    free: int = 5
    longest: float = 300.0
    overall: int = 20
    window: float = 3600.0
    clock: Callable[[], float] = time.monotonic
    _failures: dict[str, tuple[int, float]] = field(default_factory=dict)
    _recent: collections.deque[float] = field(
        default_factory=lambda: collections.deque(maxlen=64))

    def take(self, who: str) -> float:
        """Count a try of ``who`` now, before its request body is even read; or, when the
        brake says wait, the seconds to wait (and nothing counted).

        Counting up front is what makes the brake hold against slow or parallel requests: a
        try counted only after its body arrived let 30 slow requests all pass the check."""
        wait = self.wait(who)
        if wait <= 0:
            self.failed(who)  # until :meth:`succeeded` says otherwise
        return wait

    def wait(self, who: str) -> float:
        """Seconds ``who`` must still wait before another try is even checked (0: go on)."""
        now = self.clock()
        count, last = self._failures.get(peer_key(who), (0, 0.0))
        mine = 0.0
        if count >= self.free:
            mine = last + min(self.longest, 2.0 ** (count - self.free)) - now
        recent = self._recent
        while recent and recent[0] < now - self.window:
            recent.popleft()
        everyone = 0.0
        if len(recent) >= self.overall:
            everyone = recent[-1] + min(self.longest,
                                        2.0 ** (len(recent) - self.overall)) - now
        return max(0.0, mine, everyone)

    def failed(self, who: str) -> None:
        key = peer_key(who)
        count, _ = self._failures.get(key, (0, 0.0))
        now = self.clock()
        self._failures[key] = (count + 1, now)
        self._recent.append(now)
        if len(self._failures) > 10_000:  # a flood of addresses must not grow memory forever
            oldest = sorted(self._failures.items(), key=lambda kv: kv[1][1])[:5_000]
            for old, _ in oldest:
                del self._failures[old]

    def succeeded(self, who: str) -> None:
        """The client's right answer clears its own count. The overall count keeps even a try
        :meth:`take` counted before it was known right (a login, a set-up code: rare), so a
        guesser is never helped by the rightful user's tries."""
        self._failures.pop(peer_key(who), None)
