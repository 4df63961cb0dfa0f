import importlib
import json
import os
import tempfile
import unittest

import _path  # noqa: F401

from agent_bridge import ConnectorConfigError, load_config, parse_config
from agent_bridge._generated.limits import (
    CONNECTOR_RECONNECT_MAX_ATTEMPTS,
    RECONNECT_BASE_DELAY_MS,
    RECONNECT_MAX_DELAY_MS,
    SESSION_TTL_DEFAULT_DAYS,
)
from agent_bridge.config import interpolate_env

TOKEN = "rla_tutor-7k2m_" + "A" * 32


def document(**agent: object) -> dict[str, object]:
    entry: dict[str, object] = {"agent_id": "tutor-7k2m", "token": "${TUTOR_TOKEN}"}
    entry.update(agent)
    return {"connection": {"url": "wss://bridge.example.com/v1/ws/agent"}, "agents": [entry]}


class InterpolationTest(unittest.TestCase):
    def test_replaces_references_in_string_values_at_any_depth(self) -> None:
        out = interpolate_env({"a": ["x ${A} y", {"b": "${B}"}], "n": 3}, {"A": "1", "B": "two"})
        self.assertEqual(out, {"a": ["x 1 y", {"b": "two"}], "n": 3})

    def test_double_dollar_writes_a_literal_reference(self) -> None:
        self.assertEqual(interpolate_env("$${HOME} costs $$5", {}), "${HOME} costs $5")

    def test_an_unset_or_empty_variable_names_the_field_and_the_variable(self) -> None:
        with self.assertRaisesRegex(ConnectorConfigError, r"agents\[0\]\.token in the configuration: .*TUTOR_TOKEN is not set"):
            load_config(document(), env={})
        with self.assertRaisesRegex(ConnectorConfigError, "TUTOR_TOKEN is empty"):
            load_config(document(), env={"TUTOR_TOKEN": ""})

    def test_a_malformed_reference_is_an_error(self) -> None:
        with self.assertRaisesRegex(ConnectorConfigError, "unclosed"):
            interpolate_env("${OOPS", {})
        with self.assertRaisesRegex(ConnectorConfigError, "not a valid environment variable name"):
            interpolate_env("${1X}", {})

    def test_a_value_never_changes_the_documents_structure(self) -> None:
        config = load_config(document(context={"persona": "${P}"}), env={"TUTOR_TOKEN": TOKEN, "P": '"}, "x": {'})
        self.assertEqual(config.agents[0].context, {"persona": '"}, "x": {'})


class ValidationTest(unittest.TestCase):
    env = {"TUTOR_TOKEN": TOKEN}

    def test_applies_the_spec_defaults(self) -> None:
        config = load_config(document(), env=self.env)
        self.assertEqual(config.url, "wss://bridge.example.com/v1/ws/agent")
        self.assertTrue(config.reconnect.enabled)
        self.assertEqual(config.reconnect.max_retries, CONNECTOR_RECONNECT_MAX_ATTEMPTS)
        self.assertEqual(config.reconnect.base_delay_ms, RECONNECT_BASE_DELAY_MS)
        self.assertEqual(config.reconnect.max_delay_ms, RECONNECT_MAX_DELAY_MS)
        self.assertEqual(config.agents[0].ttl_days, SESSION_TTL_DEFAULT_DAYS)
        self.assertEqual(dict(config.agents[0].context), {})
        self.assertIsNone(config.health)

    def test_reads_every_setting(self) -> None:
        doc = document(ttl_days=30, context={"persona": "tutor"})
        doc["connection"] = {
            "url": "ws://127.0.0.1:8080/v1/ws/agent",
            "reconnect": {"enabled": True, "maxRetries": -1, "baseDelayMs": 500, "maxDelayMs": 8000},
        }
        doc["health"] = {"port": 8787}
        config = load_config(doc, env=self.env)
        self.assertEqual((config.reconnect.max_retries, config.reconnect.base_delay_ms), (-1, 500))
        self.assertEqual(config.reconnect.max_delay_ms, 8000)
        self.assertEqual((config.agents[0].ttl_days, config.agents[0].context), (30, {"persona": "tutor"}))
        assert config.health is not None
        self.assertEqual((config.health.port, config.health.path, config.health.host), (8787, "/health", "127.0.0.1"))

    def test_a_misspelt_option_fails_loudly(self) -> None:
        doc = document()
        doc["connection"] = {"url": "ws://x/v1/ws/agent", "reconect": {}}
        with self.assertRaisesRegex(ConnectorConfigError, "connection.reconect"):
            load_config(doc, env=self.env)

    def test_types_and_required_fields_are_checked(self) -> None:
        with self.assertRaisesRegex(ConnectorConfigError, "ttl_days"):
            load_config(document(ttl_days="30"), env=self.env)
        with self.assertRaisesRegex(ConnectorConfigError, "agents"):
            load_config({"connection": {"url": "ws://x/v1/ws/agent"}}, env=self.env)

    def test_a_token_of_another_agent_or_an_agent_listed_twice_is_refused(self) -> None:
        with self.assertRaisesRegex(ConnectorConfigError, "belongs to agent other"):
            load_config(document(), env={"TUTOR_TOKEN": "rla_other_" + "B" * 32})
        doc = document()
        doc["agents"] = [doc["agents"][0], doc["agents"][0]]  # type: ignore[index]
        with self.assertRaisesRegex(ConnectorConfigError, "listed twice"):
            load_config(doc, env=self.env)

    def test_reads_json_and_yaml_files(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "connector.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(document(), f)
            self.assertEqual(load_config(path, env=self.env).agents[0].token, TOKEN)
        yaml_text = "connection:\n  url: ws://x/v1/ws/agent\nagents:\n  - agent_id: tutor-7k2m\n    token: ${TUTOR_TOKEN}\n"
        try:
            importlib.import_module("yaml")
        except ImportError:
            self.skipTest("PyYAML is not installed")
        self.assertEqual(parse_config(yaml_text, env=self.env).agents[0].agent_id, "tutor-7k2m")

    def test_a_file_that_cannot_be_read_or_parsed_names_itself(self) -> None:
        with self.assertRaisesRegex(ConnectorConfigError, "cannot read the connector configuration /nonexistent"):
            load_config("/nonexistent/connector.json")
        with self.assertRaisesRegex(ConnectorConfigError, "x.json is not valid JSON"):
            parse_config("{", format="json", source="x.json")


if __name__ == "__main__":
    unittest.main()
