import unittest

import _path  # noqa: F401

from agent_bridge import ReconnectPolicy, backoff_delay_ms
from agent_bridge._generated.limits import RECONNECT_BASE_DELAY_MS, RECONNECT_MAX_DELAY_MS
from agent_bridge.backoff import may_retry


def no_jitter() -> float:
    return 0.0


class BackoffTest(unittest.TestCase):
    def test_doubles_from_the_base_up_to_the_cap(self) -> None:
        policy = ReconnectPolicy()
        delays = [backoff_delay_ms(n, policy, no_jitter) for n in range(1, 10)]
        base = RECONNECT_BASE_DELAY_MS
        expected = [min(RECONNECT_MAX_DELAY_MS, base * 2**i) for i in range(9)]
        self.assertEqual(delays, expected)
        self.assertEqual(delays[-1], RECONNECT_MAX_DELAY_MS)

    def test_jitter_shortens_a_delay_by_at_most_its_fraction(self) -> None:
        policy = ReconnectPolicy(jitter=0.2)
        self.assertEqual(backoff_delay_ms(1, policy, lambda: 0.5), round(RECONNECT_BASE_DELAY_MS * 0.9))
        self.assertEqual(backoff_delay_ms(3, policy, lambda: 0.999999), round(RECONNECT_BASE_DELAY_MS * 4 * 0.8))

    def test_stays_finite_after_any_number_of_attempts(self) -> None:
        self.assertEqual(backoff_delay_ms(100_000, ReconnectPolicy(), no_jitter), RECONNECT_MAX_DELAY_MS)

    def test_attempts_allowed(self) -> None:
        self.assertTrue(may_retry(4, 5))
        self.assertFalse(may_retry(5, 5))
        self.assertFalse(may_retry(0, 0))
        self.assertTrue(may_retry(10**9, -1))


if __name__ == "__main__":
    unittest.main()
