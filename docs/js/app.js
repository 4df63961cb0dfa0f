
    const schema = {
  "asyncapi": "3.1.0",
  "id": "urn:agent-messaging-bridge:v1",
  "info": {
    "title": "Agent Messaging Bridge",
    "version": "1.0.0",
    "description": "A WebSocket bridge between applications (apps, `rlk_` tokens) and AI agents (`rla_` tokens).\nAn app sends an `event` to one agent; the service answers `accepted`, delivers the event to the agent,\nforwards the agent's streamed `token` fragments and its final `reply` (or `error`) back to the app.\n\nThis document is the single source of truth for every message, field, error code, close code and limit of\nthe WebSocket interface. The HTTP parts (agent directory, admin API) are in `openapi.yaml` beside it; the\nprotocol's prose (part 1) and every decision taken where the protocol is silent (part 2) are in `protocol.md`.\n\nRules that a schema cannot say are in the root extensions: `x-error-catalogue` (every error code, who\nreceives it, how it is reported, its close code or HTTP status) and `x-limits` (every limit, as a number).\n\nThe `bus` channel, its messages and the `cluster` server are marked `x-internal`: what the nodes of one bridge\ntell each other through Redis (O14), versioned on their own (O16). They are not for clients and not part of the\ninterface version.\n\nEvery message schema is closed (decision W5) and some carry formats of this implementation (L1-L3). The\nconformance suite's protocol profile judges frames by the open variant of each schema instead, which the\ngenerator derives from this document: objects open, and each `x-open` applied (`null` drops a keyword the\nprotocol does not state, a value replaces it).\n",
    "license": {
      "name": "MIT"
    }
  },
  "defaultContentType": "application/json",
  "servers": {
    "production": {
      "host": "{host}",
      "pathname": "/v1",
      "protocol": "wss",
      "title": "The bridge",
      "description": "`{base_url}` is `wss://{host}/v1`: the path segment `/v1` is the interface version (§9). Clients\nauthenticate once, in the WebSocket handshake, with one of two carriers (see the channels' bindings).\n",
      "variables": {
        "host": {
          "default": "bridge.example.com",
          "description": "Host name and optional port of the deployment."
        }
      },
      "security": [
        {
          "type": "http",
          "scheme": "bearer",
          "description": "`Authorization: Bearer <TOKEN>` on the WebSocket upgrade request: an app token (`rlk_{app_id}_{secret}`)\non `/ws/app`, an agent token (`rla_{agent_id}_{secret}`) on `/ws/agent`. Preferred carrier: it stays out\nof URLs and access logs.\n"
        },
        {
          "type": "httpApiKey",
          "name": "token",
          "in": "query",
          "description": "`?token=<TOKEN>` on the upgrade URL, for clients that cannot set headers (browsers). When both carriers are\npresent the header wins.\n"
        }
      ]
    },
    "local": {
      "host": "localhost:8080",
      "pathname": "/v1",
      "protocol": "ws",
      "title": "A bridge started with `npm start`",
      "description": "Plain WebSocket on the default port, for development.",
      "security": [
        "$ref:$.servers.production.security[0]",
        "$ref:$.servers.production.security[1]"
      ]
    },
    "cluster": {
      "host": "{redis}",
      "protocol": "redis",
      "title": "Redis between the nodes of one bridge (internal)",
      "description": "Internal, not for clients: the nodes of one bridge (several nodes, O14) talk to each other through Redis\npub/sub (`REDIS_URL`). Only the internal `bus` channel is here; no client connects to it.\n",
      "variables": {
        "redis": {
          "default": "127.0.0.1:6379",
          "description": "Host and port of the Redis the nodes share (`REDIS_URL`)."
        }
      },
      "x-internal": true
    }
  },
  "channels": {
    "app": {
      "address": "/ws/app",
      "title": "App connection",
      "summary": "Apps send events and discovery requests; they receive acceptances, streamed tokens, replies and errors.",
      "description": "Only app tokens (`rlk_`) are accepted here; an agent token gets FORBIDDEN. Several instances of one app may\nconnect with the same token, each on its own connection; replies and tokens go only to the connection that\nsent the event.\n\n**Resumable streams** (an extension of this implementation, R1–R9 in protocol.md): a connection opened with\n`?resume=1` gets a `resume_token` in each `accepted` and a `seq` in each `token`, and may send `resume` to take\nback, on a new connection after a dropped one, the events it is still waiting for. A connection opened\nwithout it never receives either field, and `resume` is then an unknown message (INVALID_MESSAGE).\n\n**Cancel** (an extension of this implementation, S1–S8 in protocol.md): an app may send `cancel` for an event\nof its own in flight on this connection (sent on it, or taken over by its resume): the event ends at once for\nit with `error` CANCELLED, and the bridge stops the agent's stream. A cancel of an event that is not in flight\nfor this connection gets CANCEL_REFUSED, the same for an unknown, an ended and another app's event. A bridge\nwithout the extension answers `cancel` as any unknown message (INVALID_MESSAGE): sending it is the opt-in.\n",
      "messages": {
        "event": {
          "name": "event",
          "title": "Event (app to service)",
          "summary": "An event addressed to one agent.",
          "payload": {
            "title": "EventMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "App to service. Answered by exactly one `accepted` or one `error`, in the order the app sent its events.\n",
            "required": [
              "type",
              "agent_id",
              "thread_id",
              "payload"
            ],
            "x-field-error-codes": {
              "agent_id": "INVALID_AGENT_ID",
              "thread_id": "INVALID_THREAD_ID"
            },
            "properties": {
              "type": {
                "const": "event",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-1>"
              },
              "agent_id": {
                "title": "AgentId",
                "x-open": {
                  "maxLength": null
                },
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
                "pattern": "^[a-z0-9-]+$",
                "description": "Generated by the service at agent registration. Lowercase letters, digits and hyphens only (otherwise\nINVALID_AGENT_ID); at most 64 characters so every stored session key fits 255 characters. It never\ncontains `_` or `:`, so tokens and session keys split unambiguously.\n",
                "examples": [
                  "tutor-7k2m"
                ],
                "x-parser-schema-id": "AgentId"
              },
              "thread_id": {
                "title": "ThreadId",
                "x-open": {
                  "maxLength": null,
                  "pattern": null
                },
                "type": "string",
                "minLength": 1,
                "maxLength": 121,
                "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]+$",
                "description": "Chosen by the app (a task, lesson or channel identifier). Non-empty, at most 121 characters (Unicode code\npoints), no control characters (U+0000-U+001F, U+007F-U+009F) and no unpaired surrogates; otherwise\nINVALID_THREAD_ID. 121 = 255 - len(\"svc:\") - 64 - 1 - 64 - 1: the stored session key of any valid\nagent, app and thread fits 255 characters. The pattern is evaluated in Unicode mode (ECMA-262 `u` flag).\nIt may contain `:`, which is safe because it is the last part of a session key.\n",
                "examples": [
                  "lesson-42",
                  "channel:general"
                ],
                "x-parser-schema-id": "ThreadId"
              },
              "payload": {
                "title": "Payload",
                "type": "object",
                "additionalProperties": true,
                "description": "The app's opaque payload. The service never reads, validates, transforms or routes on it; it only measures\nit: at most 64000 bytes as the UTF-8 length of its compact JSON serialisation (JSON.stringify without\nspaces), otherwise PAYLOAD_TOO_LARGE. It carries an app-defined field (such as the kind of event) agreed\nbetween app and agent.\n",
                "examples": [
                  {
                    "kind": "question",
                    "text": "What is a prime number?"
                  }
                ],
                "x-parser-schema-id": "Payload"
              }
            },
            "examples": [
              {
                "type": "event",
                "agent_id": "tutor-7k2m",
                "thread_id": "lesson-42",
                "payload": {
                  "kind": "question",
                  "text": "What is a prime number?"
                }
              }
            ],
            "x-parser-schema-id": "EventMessage"
          },
          "examples": [
            {
              "name": "lessonQuestion",
              "payload": {
                "type": "event",
                "agent_id": "tutor-7k2m",
                "thread_id": "lesson-42",
                "payload": {
                  "kind": "question",
                  "text": "What is a prime number?"
                }
              }
            }
          ],
          "x-parser-unique-object-id": "event"
        },
        "resume": {
          "name": "resume",
          "title": "Resume (app to service, resume extension)",
          "summary": "Takes back an event whose connection dropped, from the fragment after `after_seq`.",
          "payload": {
            "title": "ResumeMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "App to service, resume extension (R4), only on a connection opened with `?resume=1`. Takes back an event\nthis app sent on a connection that dropped; answered with the event's fragments after `after_seq`, then its\nlive ones, then its reply or error, or with one `error` (RESUME_GAP, RESUME_REFUSED).\n",
            "required": [
              "type",
              "event_id",
              "resume_token",
              "after_seq"
            ],
            "properties": {
              "type": {
                "const": "resume",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-2>"
              },
              "event_id": {
                "title": "EventId",
                "x-open": {
                  "minLength": null,
                  "maxLength": null,
                  "pattern": null
                },
                "type": "string",
                "minLength": 1,
                "maxLength": 128,
                "pattern": "^[0-9A-Za-z_-]+$",
                "description": "Generated by the service; unique and sortable by creation time (this implementation uses ULIDs, followed on a\nbridge of several nodes by `-` and the id of the node the event lives on, O14). Opaque to clients: letters,\ndigits, `_` and `-`, at most 128 characters.\n",
                "examples": [
                  "01JQ7ZK3M4N5P6Q7R8S9T0V1W2"
                ],
                "x-parser-schema-id": "EventId"
              },
              "resume_token": {
                "title": "ResumeToken",
                "type": "string",
                "description": "Resume extension (R2): the secret that lets the connection that sent an event, and only a connection that\nholds it, take the event back after a drop. 256 random bits in base64url; unique per event; shown only to\nthe connection that sent the event, in its `accepted`.\n",
                "pattern": "^[A-Za-z0-9_-]{43}$",
                "examples": [
                  "6sQk1bZQz2m0yYl7c3Jw9AeHf4tXrUoVdPiN8KgLqE0"
                ],
                "x-parser-schema-id": "ResumeToken"
              },
              "after_seq": {
                "type": "integer",
                "minimum": 0,
                "maximum": 9007199254740991,
                "description": "The `seq` of the last fragment the app received of this event; 0 when it received none.",
                "x-parser-schema-id": "<anonymous-schema-3>"
              }
            },
            "examples": [
              {
                "type": "resume",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "resume_token": "6sQk1bZQz2m0yYl7c3Jw9AeHf4tXrUoVdPiN8KgLqE0",
                "after_seq": 17
              }
            ],
            "x-parser-schema-id": "ResumeMessage"
          },
          "examples": [
            {
              "name": "resumeAfterDrop",
              "payload": {
                "type": "resume",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "resume_token": "6sQk1bZQz2m0yYl7c3Jw9AeHf4tXrUoVdPiN8KgLqE0",
                "after_seq": 17
              }
            }
          ],
          "x-parser-unique-object-id": "resume"
        },
        "cancel": {
          "name": "cancel",
          "title": "Cancel (app to service, cancel extension)",
          "summary": "Stops an event in flight of this connection; the app gets CANCELLED as its last frame.",
          "payload": {
            "title": "CancelMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "App to service, cancel extension (S2). Ends an event in flight of this connection (sent on it, or taken over\nby its resume): answered by one `error` CANCELLED, the event's last frame; or, for an event not in flight for\nthis connection, by one `error` CANCEL_REFUSED (S3).\n",
            "required": [
              "type",
              "event_id"
            ],
            "properties": {
              "type": {
                "const": "cancel",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-4>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id"
            },
            "examples": [
              {
                "type": "cancel",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2"
              }
            ],
            "x-parser-schema-id": "CancelMessage"
          },
          "examples": [
            {
              "name": "stop",
              "payload": {
                "type": "cancel",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2"
              }
            }
          ],
          "x-parser-unique-object-id": "cancel"
        },
        "discover": {
          "name": "discover",
          "title": "Discover",
          "summary": "Asks for the agents this app may use.",
          "payload": {
            "title": "DiscoverMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "App to service. Answered by `agents`.",
            "required": [
              "type"
            ],
            "properties": {
              "type": {
                "const": "discover",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-5>"
              }
            },
            "examples": [
              {
                "type": "discover"
              }
            ],
            "x-parser-schema-id": "DiscoverMessage"
          },
          "examples": [
            {
              "name": "discover",
              "payload": {
                "type": "discover"
              }
            }
          ],
          "x-parser-unique-object-id": "discover"
        },
        "ping": {
          "name": "ping",
          "title": "Ping",
          "summary": "Heartbeat from a client, every 30 seconds.",
          "payload": {
            "title": "PingMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "App or agent to service, every 30 seconds. Answered by `pong`.",
            "required": [
              "type"
            ],
            "properties": {
              "type": {
                "const": "ping",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-6>"
              }
            },
            "examples": [
              {
                "type": "ping"
              }
            ],
            "x-parser-schema-id": "PingMessage"
          },
          "examples": [
            {
              "name": "ping",
              "payload": {
                "type": "ping"
              }
            }
          ],
          "x-parser-unique-object-id": "ping"
        },
        "accepted": {
          "name": "accepted",
          "title": "Accepted",
          "summary": "The event was accepted; sent before the agent receives it.",
          "payload": {
            "title": "AcceptedMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Service to app. Sent immediately, before the agent receives the event.",
            "required": [
              "type",
              "event_id",
              "agent_id",
              "session_key",
              "status"
            ],
            "properties": {
              "type": {
                "const": "accepted",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-7>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "agent_id": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
              "session_key": {
                "title": "SessionKey",
                "x-open": {
                  "pattern": null,
                  "maxLength": null
                },
                "type": "string",
                "maxLength": 255,
                "pattern": "^svc:[a-z0-9-]{1,64}:[a-z0-9-]{1,64}:[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]+$",
                "description": "The session key stored by the service, `svc:{agent_id}:{app_id}:{thread_id}` (`svc` is a fixed literal).\nTracks unique conversations across agents and apps; returned to apps in `accepted` and in reply metadata.\n",
                "examples": [
                  "svc:tutor-7k2m:classroom-app:lesson-42"
                ],
                "x-parser-schema-id": "SessionKey"
              },
              "status": {
                "const": "accepted",
                "description": "Always `accepted`.",
                "x-parser-schema-id": "<anonymous-schema-8>"
              },
              "resume_token": "$ref:$.channels.app.messages.resume.payload.properties.resume_token"
            },
            "examples": [
              {
                "type": "accepted",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "agent_id": "tutor-7k2m",
                "session_key": "svc:tutor-7k2m:classroom-app:lesson-42",
                "status": "accepted"
              }
            ],
            "x-parser-schema-id": "AcceptedMessage"
          },
          "examples": [
            {
              "name": "accepted",
              "payload": {
                "type": "accepted",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "agent_id": "tutor-7k2m",
                "session_key": "svc:tutor-7k2m:classroom-app:lesson-42",
                "status": "accepted"
              }
            }
          ],
          "x-parser-unique-object-id": "accepted"
        },
        "token": {
          "name": "token",
          "title": "Token (service to app)",
          "summary": "One streamed fragment of the agent's answer, forwarded at once.",
          "payload": {
            "title": "TokenMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Service to app. One fragment from the agent, forwarded at once with the agent_id added.",
            "required": [
              "type",
              "event_id",
              "agent_id",
              "token"
            ],
            "properties": {
              "type": {
                "const": "token",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-9>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "agent_id": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
              "token": {
                "type": "string",
                "description": "A fragment such as a word, part of a word or punctuation; at most 4096 UTF-8 bytes.",
                "x-parser-schema-id": "<anonymous-schema-10>"
              },
              "seq": {
                "title": "StreamSeq",
                "type": "integer",
                "description": "Resume extension (R3): a fragment's position in its event's stream: 1 for the first `token` of the event, one\nmore for each next one, the same when a fragment is sent again after a resume.\n",
                "minimum": 1,
                "maximum": 9007199254740991,
                "examples": [
                  17
                ],
                "x-parser-schema-id": "StreamSeq"
              }
            },
            "examples": [
              {
                "type": "token",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "agent_id": "tutor-7k2m",
                "token": "A prime number "
              }
            ],
            "x-parser-schema-id": "TokenMessage"
          },
          "examples": [
            {
              "name": "fragment",
              "payload": {
                "type": "token",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "agent_id": "tutor-7k2m",
                "token": "A prime number "
              }
            }
          ],
          "x-parser-unique-object-id": "token"
        },
        "reply": {
          "name": "reply",
          "title": "Reply (service to app)",
          "summary": "The agent's final answer; the last message for the event.",
          "payload": {
            "title": "ReplyMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Service to app. The final message for the event, sent after all its tokens.",
            "required": [
              "type",
              "event_id",
              "agent_id",
              "thread_id",
              "reply",
              "payload",
              "metadata"
            ],
            "properties": {
              "type": {
                "const": "reply",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-11>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "agent_id": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
              "thread_id": "$ref:$.channels.app.messages.event.payload.properties.thread_id",
              "reply": {
                "type": "string",
                "description": "The full text: the agent's `content`, or the forwarded token fragments joined in order when `content`\nis empty (W10). Never a part of the text: a reply the service cannot deliver whole ends the event with\nREPLY_TOO_LARGE instead (L14, L16); at most replyContentMaxBytes as a JSON string.\n",
                "x-parser-schema-id": "<anonymous-schema-12>"
              },
              "payload": "$ref:$.channels.app.messages.event.payload.properties.payload",
              "metadata": {
                "title": "ReplyMetadata",
                "type": "object",
                "additionalProperties": false,
                "description": "Set by the service on every reply to an app.",
                "required": [
                  "tokens_used",
                  "model",
                  "latency_ms",
                  "session_key"
                ],
                "properties": {
                  "tokens_used": {
                    "type": "integer",
                    "minimum": 0,
                    "x-open": {
                      "type": "number",
                      "minimum": null
                    },
                    "description": "The agent's `metadata.tokens_used`, or the number of token fragments forwarded when the agent gave none.\n",
                    "x-parser-schema-id": "<anonymous-schema-13>"
                  },
                  "model": {
                    "type": "string",
                    "description": "The agent's `metadata.model`, or `unknown` when the agent gave none.",
                    "x-parser-schema-id": "<anonymous-schema-14>"
                  },
                  "latency_ms": {
                    "type": "number",
                    "minimum": 0,
                    "description": "End-to-end milliseconds measured by the service, from receiving the app's `event` to sending this reply.\n",
                    "x-parser-schema-id": "<anonymous-schema-15>"
                  },
                  "session_key": "$ref:$.channels.app.messages.accepted.payload.properties.session_key"
                },
                "examples": [
                  {
                    "tokens_used": 9,
                    "model": "tutor-large",
                    "latency_ms": 812,
                    "session_key": "svc:tutor-7k2m:classroom-app:lesson-42"
                  }
                ],
                "x-parser-schema-id": "ReplyMetadata"
              }
            },
            "examples": [
              {
                "type": "reply",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "agent_id": "tutor-7k2m",
                "thread_id": "lesson-42",
                "reply": "A prime number has exactly two divisors.",
                "payload": {
                  "kind": "question",
                  "text": "What is a prime number?"
                },
                "metadata": {
                  "tokens_used": 9,
                  "model": "tutor-large",
                  "latency_ms": 812,
                  "session_key": "svc:tutor-7k2m:classroom-app:lesson-42"
                }
              }
            ],
            "x-parser-schema-id": "ReplyMessage"
          },
          "examples": [
            {
              "name": "reply",
              "payload": {
                "type": "reply",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "agent_id": "tutor-7k2m",
                "thread_id": "lesson-42",
                "reply": "A prime number has exactly two divisors.",
                "payload": {
                  "kind": "question",
                  "text": "What is a prime number?"
                },
                "metadata": {
                  "tokens_used": 9,
                  "model": "tutor-large",
                  "latency_ms": 812,
                  "session_key": "svc:tutor-7k2m:classroom-app:lesson-42"
                }
              }
            }
          ],
          "x-parser-unique-object-id": "reply"
        },
        "error": {
          "name": "error",
          "title": "Error (service to app)",
          "summary": "An event failed, a frame was invalid, or the connection is refused.",
          "payload": {
            "title": "ErrorMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Service to app. Ends an event (instead of `accepted`, or instead of `reply`), refuses a frame, or precedes\nthe close of the connection (see `x-error-catalogue`).\n",
            "required": [
              "type",
              "error",
              "code"
            ],
            "properties": {
              "type": {
                "const": "error",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-16>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "agent_id": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
              "error": {
                "type": "string",
                "description": "Human-readable explanation. Never contains a token or a payload.",
                "x-parser-schema-id": "<anonymous-schema-17>"
              },
              "code": {
                "title": "ErrorCode",
                "type": "string",
                "description": "Every error code of the protocol. Who receives each code, its cause and how it is reported (in an `error`\nmessage about an event, about a frame, or before a close, with its close code) is in `x-error-catalogue`.\n",
                "enum": [
                  "AGENT_NOT_FOUND",
                  "AGENT_OFFLINE",
                  "AGENT_TIMEOUT",
                  "AGENT_ERROR",
                  "PERMISSION_DENIED",
                  "INVALID_AGENT_ID",
                  "INVALID_THREAD_ID",
                  "PAYLOAD_TOO_LARGE",
                  "INVALID_JSON",
                  "INVALID_MESSAGE",
                  "RATE_LIMIT_EXCEEDED",
                  "TOO_MANY_EVENTS",
                  "REPLY_TOO_LARGE",
                  "INVALID_EVENT_ID",
                  "MESSAGE_TOO_LARGE",
                  "UNAUTHORIZED",
                  "TOKEN_REVOKED",
                  "FORBIDDEN",
                  "CONNECTION_REPLACED",
                  "DISCONNECTED_BY_ADMIN",
                  "HEARTBEAT_TIMEOUT",
                  "SLOW_CONSUMER",
                  "TOO_MANY_CONNECTIONS",
                  "INCOMPLETE_MESSAGE",
                  "INTERNAL_ERROR",
                  "SHUTTING_DOWN",
                  "INVALID_REQUEST",
                  "REQUEST_TIMEOUT",
                  "NOT_FOUND",
                  "METHOD_NOT_ALLOWED",
                  "ADMIN_API_DISABLED",
                  "OVERLOADED",
                  "RESUME_GAP",
                  "RESUME_REFUSED",
                  "TOO_MANY_REQUESTS",
                  "CANCELLED",
                  "CANCEL_REFUSED"
                ],
                "examples": [
                  "AGENT_OFFLINE"
                ],
                "x-parser-schema-id": "ErrorCode"
              },
              "metadata": {
                "title": "ErrorMetadata",
                "type": "object",
                "additionalProperties": false,
                "description": "Extra facts about an error; present only where a code defines them.",
                "required": [
                  "retry_after_seconds"
                ],
                "properties": {
                  "retry_after_seconds": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "With RATE_LIMIT_EXCEEDED, the seconds to wait before the next event will be accepted; with TOO_MANY_REQUESTS, before the same `discover` or `resume` will be (decision F3). At most one refill period of the bucket that refused it (F1); for the bytes resumes send again, the time the organization takes to repay the answer it last took (R10).",
                    "x-parser-schema-id": "<anonymous-schema-18>"
                  }
                },
                "examples": [
                  {
                    "retry_after_seconds": 2
                  }
                ],
                "x-parser-schema-id": "ErrorMetadata"
              }
            },
            "examples": [
              {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W3",
                "agent_id": "tutor-7k2m",
                "error": "Agent tutor-7k2m is not connected.",
                "code": "AGENT_OFFLINE"
              }
            ],
            "x-parser-schema-id": "ErrorMessage"
          },
          "examples": [
            {
              "name": "agentOffline",
              "payload": {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W3",
                "agent_id": "tutor-7k2m",
                "error": "Agent tutor-7k2m is not connected.",
                "code": "AGENT_OFFLINE"
              }
            },
            {
              "name": "rateLimited",
              "payload": {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W4",
                "agent_id": "tutor-7k2m",
                "error": "Too many events; retry after 2 seconds.",
                "code": "RATE_LIMIT_EXCEEDED",
                "metadata": {
                  "retry_after_seconds": 2
                }
              }
            },
            {
              "name": "tooManyEvents",
              "payload": {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W5",
                "agent_id": "tutor-7k2m",
                "error": "App classroom-app has 1000 events in flight, the limit; send more once earlier events have ended.",
                "code": "TOO_MANY_EVENTS"
              }
            },
            {
              "name": "replyTooLarge",
              "payload": {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W6",
                "agent_id": "tutor-7k2m",
                "error": "The agent's reply is 1200000 bytes of text; one reply carries at most 976000.",
                "code": "REPLY_TOO_LARGE"
              }
            },
            {
              "name": "invalidJson",
              "payload": {
                "type": "error",
                "error": "Message is not valid JSON: Unexpected token } in JSON at position 12.",
                "code": "INVALID_JSON"
              }
            },
            {
              "name": "unauthorized",
              "payload": {
                "type": "error",
                "error": "The token is wrong, expired or rotated out.",
                "code": "UNAUTHORIZED"
              }
            }
          ],
          "x-parser-unique-object-id": "error"
        },
        "agents": {
          "name": "agents",
          "title": "Agents",
          "summary": "The agents this app may use, in answer to `discover`.",
          "payload": {
            "title": "AgentsMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Service to app, in answer to `discover`. Lists the active agents of the app's organization that the app\nmay use (it is on their allowlist, or they have none), sorted by agent_id. The frame is at most\nframeMaxBytes (W13): when the agents do not all fit, it lists the first of them that fit, in that order, and\ncarries `incomplete: true`; the app reads the rest from the HTTP directory\n(`GET /v1/organizations/{org_id}/agents?after=<the last agent_id listed>`, whose pages follow the same\norder; `allowlisted` marks the agents it may use).\n",
            "required": [
              "type",
              "agents"
            ],
            "properties": {
              "type": {
                "const": "agents",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-19>"
              },
              "agents": {
                "type": "array",
                "description": "The agents, possibly none.",
                "items": {
                  "title": "AgentSummary",
                  "type": "object",
                  "additionalProperties": false,
                  "description": "One agent the app may use.",
                  "required": [
                    "agent_id",
                    "name",
                    "description"
                  ],
                  "properties": {
                    "agent_id": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
                    "name": {
                      "type": "string",
                      "description": "Display name given at registration.",
                      "x-parser-schema-id": "<anonymous-schema-21>"
                    },
                    "description": {
                      "type": "string",
                      "description": "Description given at registration; empty when none was given.",
                      "x-parser-schema-id": "<anonymous-schema-22>"
                    }
                  },
                  "examples": [
                    {
                      "agent_id": "tutor-7k2m",
                      "name": "Tutor",
                      "description": "Answers questions about the lesson."
                    }
                  ],
                  "x-parser-schema-id": "AgentSummary"
                },
                "x-parser-schema-id": "<anonymous-schema-20>"
              },
              "incomplete": {
                "const": true,
                "description": "Present only when the list leaves agents out because they do not fit one frame (W13): those after the\nlast agent listed. Absent when the list is whole.\n",
                "x-parser-schema-id": "<anonymous-schema-23>"
              }
            },
            "examples": [
              {
                "type": "agents",
                "agents": [
                  {
                    "agent_id": "tutor-7k2m",
                    "name": "Tutor",
                    "description": "Answers questions about the lesson."
                  }
                ]
              }
            ],
            "x-parser-schema-id": "AgentsMessage"
          },
          "examples": [
            {
              "name": "agents",
              "payload": {
                "type": "agents",
                "agents": [
                  {
                    "agent_id": "tutor-7k2m",
                    "name": "Tutor",
                    "description": "Answers questions about the lesson."
                  }
                ]
              }
            }
          ],
          "x-parser-unique-object-id": "agents"
        },
        "pong": {
          "name": "pong",
          "title": "Pong",
          "summary": "The service's answer to `ping`.",
          "payload": {
            "title": "PongMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Service to app or agent, in answer to `ping`.",
            "required": [
              "type"
            ],
            "properties": {
              "type": {
                "const": "pong",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-24>"
              }
            },
            "examples": [
              {
                "type": "pong"
              }
            ],
            "x-parser-schema-id": "PongMessage"
          },
          "examples": [
            {
              "name": "pong",
              "payload": {
                "type": "pong"
              }
            }
          ],
          "x-parser-unique-object-id": "pong"
        }
      },
      "servers": [
        "$ref:$.servers.production",
        "$ref:$.servers.local"
      ],
      "bindings": {
        "ws": {
          "method": "GET",
          "headers": {
            "type": "object",
            "properties": {
              "Authorization": {
                "type": "string",
                "pattern": "^Bearer (rlk|rla)_[a-z0-9-]{1,64}_[A-Za-z0-9]{32,}$",
                "description": "`Bearer <TOKEN>`; one of the two carriers."
              }
            }
          },
          "query": {
            "type": "object",
            "properties": {
              "token": {
                "type": "string",
                "pattern": "^(rlk|rla)_[a-z0-9-]{1,64}_[A-Za-z0-9]{32,}$",
                "description": "The token; the other carrier. Ignored when the Authorization header is present."
              },
              "resume": {
                "type": "string",
                "const": "1",
                "description": "On `/ws/app` only: this connection uses resumable streams (R1). Any other value, or the parameter on\n`/ws/agent`, is ignored.\n"
              },
              "cancel": {
                "type": "string",
                "const": "1",
                "description": "On `/ws/agent` only: this connection receives `cancel` for the events its apps cancel (S1, S4). Any\nother value, or the parameter on `/ws/app`, is ignored.\n"
              }
            }
          },
          "bindingVersion": "0.1.0"
        }
      },
      "x-parser-unique-object-id": "app"
    },
    "agent": {
      "address": "/ws/agent",
      "title": "Agent connection",
      "summary": "Agents receive events; they send streamed tokens, a final reply or an error for each.",
      "description": "Only agent tokens (`rla_`) are accepted here; an app token gets FORBIDDEN. One connection per agent: a second\nconnection with the same agent's token replaces the first, which is closed with CONNECTION_REPLACED.\n\n**Cancel** (an extension of this implementation, S1–S8 in protocol.md): a connection opened with `?cancel=1`\ngets `cancel` when the app of one of its events cancelled it; only such a connection ever receives it. On\nevery agent connection, opted in or not, the frames the agent still sends for a cancelled event are dropped\nwithout an error, until its reply or error for it or agentTimeoutMs after the cancel (S4).\n",
      "messages": {
        "event": {
          "name": "event",
          "title": "Event (service to agent)",
          "summary": "An app's event, delivered with the session key the agent uses.",
          "payload": {
            "title": "EventToAgentMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Service to agent. The app's event, with the session key without agent_id.",
            "required": [
              "type",
              "event_id",
              "app_id",
              "thread_id",
              "session_key",
              "payload"
            ],
            "properties": {
              "type": {
                "const": "event",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-25>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "app_id": {
                "title": "AppId",
                "x-open": {
                  "minLength": null,
                  "maxLength": null,
                  "pattern": null
                },
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
                "pattern": "^[a-z0-9-]+$",
                "description": "Generated by the service at app registration; same rules as AgentId. Appears in the app token and in\nevents delivered to agents.\n",
                "examples": [
                  "classroom-app"
                ],
                "x-parser-schema-id": "AppId"
              },
              "thread_id": "$ref:$.channels.app.messages.event.payload.properties.thread_id",
              "session_key": {
                "title": "AgentSessionKey",
                "x-open": {
                  "pattern": null,
                  "maxLength": null
                },
                "type": "string",
                "maxLength": 255,
                "pattern": "^svc:[a-z0-9-]{1,64}:[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]+$",
                "description": "The session key sent to the agent, `svc:{app_id}:{thread_id}`, with no agent_id in it. The agent maps it\nto its own conversation history (the service keeps none).\n",
                "examples": [
                  "svc:classroom-app:lesson-42"
                ],
                "x-parser-schema-id": "AgentSessionKey"
              },
              "payload": "$ref:$.channels.app.messages.event.payload.properties.payload"
            },
            "examples": [
              {
                "type": "event",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "app_id": "classroom-app",
                "thread_id": "lesson-42",
                "session_key": "svc:classroom-app:lesson-42",
                "payload": {
                  "kind": "question",
                  "text": "What is a prime number?"
                }
              }
            ],
            "x-parser-schema-id": "EventToAgentMessage"
          },
          "examples": [
            {
              "name": "delivered",
              "payload": {
                "type": "event",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "app_id": "classroom-app",
                "thread_id": "lesson-42",
                "session_key": "svc:classroom-app:lesson-42",
                "payload": {
                  "kind": "question",
                  "text": "What is a prime number?"
                }
              }
            }
          ],
          "x-parser-unique-object-id": "event"
        },
        "cancel": {
          "name": "cancel",
          "title": "Cancel (service to agent, cancel extension)",
          "summary": "The app cancelled this event; the agent may stop generating (only with `?cancel=1`).",
          "payload": {
            "title": "CancelToAgentMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Service to agent, cancel extension (S4), only on a connection opened with `?cancel=1`: the app cancelled the\nevent. The agent may stop; whatever it still sends for the event is dropped without an error.\n",
            "required": [
              "type",
              "event_id"
            ],
            "properties": {
              "type": {
                "const": "cancel",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-26>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id"
            },
            "examples": [
              {
                "type": "cancel",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2"
              }
            ],
            "x-parser-schema-id": "CancelToAgentMessage"
          },
          "examples": [
            {
              "name": "cancelled",
              "payload": {
                "type": "cancel",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2"
              }
            }
          ],
          "x-parser-unique-object-id": "cancel"
        },
        "pong": "$ref:$.channels.app.messages.pong",
        "error": {
          "name": "error",
          "title": "Error (service to agent)",
          "summary": "A frame from the agent was refused, or the connection is refused or closed.",
          "payload": {
            "title": "ErrorToAgentMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Service to agent (a decision, W3: the protocol does not show it). Same shape as the app's `error`\nwithout agent_id: it refuses a frame (the event, if any, goes on) or precedes the close of the connection.\nThe protocol shows only that an agent gets errors and that each has a code of its catalogue (section 7.2 of\nspec/protocol.md), so the open variant requires `type` and `code` alone and leaves `event_id` and `error`\nto W3 (a `null` or missing `event_id` breaks no protocol rule).\n",
            "required": [
              "type",
              "error",
              "code"
            ],
            "x-open": {
              "required": [
                "type",
                "code"
              ]
            },
            "properties": {
              "type": {
                "const": "error",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-27>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "error": {
                "type": "string",
                "description": "Human-readable explanation. Never contains a token or a payload.",
                "x-open": {
                  "type": null
                },
                "x-parser-schema-id": "<anonymous-schema-28>"
              },
              "code": "$ref:$.channels.app.messages.error.payload.properties.code"
            },
            "examples": [
              {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W9",
                "error": "Event 01JQ7ZK3M4N5P6Q7R8S9T0V1W9 is unknown or already finished.",
                "code": "INVALID_EVENT_ID"
              }
            ],
            "x-parser-schema-id": "ErrorToAgentMessage"
          },
          "examples": [
            {
              "name": "unknownEvent",
              "payload": {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W9",
                "error": "Event 01JQ7ZK3M4N5P6Q7R8S9T0V1W9 is unknown or already finished.",
                "code": "INVALID_EVENT_ID"
              }
            },
            {
              "name": "fragmentTooLarge",
              "payload": {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "error": "Token fragment is 5012 bytes; the limit is 4096. The fragment was dropped.",
                "code": "MESSAGE_TOO_LARGE"
              }
            },
            {
              "name": "replyTooLarge",
              "payload": {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W6",
                "error": "The reply's text is 1200000 bytes; one reply carries at most 976000. The event has ended.",
                "code": "REPLY_TOO_LARGE"
              }
            },
            {
              "name": "replaced",
              "payload": {
                "type": "error",
                "error": "Another connection with this agent's token replaced this one.",
                "code": "CONNECTION_REPLACED"
              }
            }
          ],
          "x-parser-unique-object-id": "error"
        },
        "token": {
          "name": "token",
          "title": "Token (agent to service)",
          "summary": "One fragment of the answer, sent as generated.",
          "payload": {
            "title": "AgentTokenMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Agent to service. One fragment per message, sent as generated; at most 4096 UTF-8 bytes (otherwise\nMESSAGE_TOO_LARGE: the fragment is dropped and the event goes on). 1 to 5 words are recommended.\n",
            "required": [
              "type",
              "event_id",
              "token"
            ],
            "x-field-error-codes": {
              "event_id": "INVALID_EVENT_ID"
            },
            "properties": {
              "type": {
                "const": "token",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-29>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "token": {
                "type": "string",
                "description": "The fragment.",
                "x-parser-schema-id": "<anonymous-schema-30>"
              }
            },
            "examples": [
              {
                "type": "token",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "token": "A prime number "
              }
            ],
            "x-parser-schema-id": "AgentTokenMessage"
          },
          "examples": [
            {
              "name": "fragment",
              "payload": {
                "type": "token",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "token": "A prime number "
              }
            }
          ],
          "x-parser-unique-object-id": "token"
        },
        "reply": {
          "name": "reply",
          "title": "Reply (agent to service)",
          "summary": "The final answer; `content` may be empty when it was streamed as tokens.",
          "payload": {
            "title": "AgentReplyMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Agent to service. The final answer for the event, after all its tokens.",
            "required": [
              "type",
              "event_id",
              "content",
              "done"
            ],
            "x-field-error-codes": {
              "event_id": "INVALID_EVENT_ID"
            },
            "properties": {
              "type": {
                "const": "reply",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-31>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "content": {
                "type": "string",
                "description": "The full text; may be empty when it was already streamed as tokens. At most replyContentMaxBytes\n(976000) bytes as a JSON string (its UTF-8 length without the quotes); a longer text, or an empty one\nafter a stream the service stopped keeping, gets REPLY_TOO_LARGE and ends the event (L14, L16).\n",
                "x-parser-schema-id": "<anonymous-schema-32>"
              },
              "done": {
                "const": true,
                "description": "Always true.",
                "x-parser-schema-id": "<anonymous-schema-33>"
              },
              "metadata": {
                "title": "AgentReplyMetadata",
                "type": "object",
                "additionalProperties": true,
                "description": "Optional facts from the agent. Other fields are allowed and ignored, so an agent's extra metadata never\ncosts it its reply.\n",
                "properties": {
                  "tokens_used": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Tokens the agent's model used.",
                    "x-parser-schema-id": "<anonymous-schema-34>"
                  },
                  "model": {
                    "type": "string",
                    "description": "The agent's model name.",
                    "x-parser-schema-id": "<anonymous-schema-35>"
                  },
                  "latency_ms": {
                    "type": "number",
                    "minimum": 0,
                    "description": "The agent's own processing time in milliseconds (informational; the app gets the service's).",
                    "x-parser-schema-id": "<anonymous-schema-36>"
                  }
                },
                "examples": [
                  {
                    "tokens_used": 9,
                    "model": "tutor-large",
                    "latency_ms": 640
                  }
                ],
                "x-parser-schema-id": "AgentReplyMetadata"
              }
            },
            "examples": [
              {
                "type": "reply",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "content": "A prime number has exactly two divisors.",
                "done": true,
                "metadata": {
                  "tokens_used": 9,
                  "model": "tutor-large"
                }
              }
            ],
            "x-parser-schema-id": "AgentReplyMessage"
          },
          "examples": [
            {
              "name": "full",
              "payload": {
                "type": "reply",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "content": "A prime number has exactly two divisors.",
                "done": true,
                "metadata": {
                  "tokens_used": 9,
                  "model": "tutor-large",
                  "latency_ms": 640
                }
              }
            },
            {
              "name": "afterStreaming",
              "payload": {
                "type": "reply",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "content": "",
                "done": true
              }
            }
          ],
          "x-parser-unique-object-id": "reply"
        },
        "agentError": {
          "name": "error",
          "title": "Error (agent to service)",
          "summary": "Processing failed; sent instead of a reply. Agents must not stay silent on failure.",
          "payload": {
            "title": "AgentErrorMessage",
            "type": "object",
            "additionalProperties": false,
            "description": "Agent to service, instead of a reply, when processing fails. The service passes it to the app as an `error`\nwith code AGENT_TIMEOUT when the agent's code is AGENT_TIMEOUT, and AGENT_ERROR for any other code; the\nagent's text becomes the app's `error`.\n",
            "required": [
              "type",
              "event_id",
              "error",
              "code"
            ],
            "x-field-error-codes": {
              "event_id": "INVALID_EVENT_ID"
            },
            "properties": {
              "type": {
                "const": "error",
                "description": "Message type.",
                "x-parser-schema-id": "<anonymous-schema-37>"
              },
              "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "error": {
                "type": "string",
                "description": "Human-readable explanation, passed to the app.",
                "x-parser-schema-id": "<anonymous-schema-38>"
              },
              "code": {
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
                "pattern": "^[A-Z][A-Z0-9_]*$",
                "description": "The agent's code; AGENT_ERROR or AGENT_TIMEOUT are the ones with a meaning for the app.",
                "x-parser-schema-id": "<anonymous-schema-39>"
              }
            },
            "examples": [
              {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "error": "The model backend is unavailable.",
                "code": "AGENT_ERROR"
              }
            ],
            "x-parser-schema-id": "AgentErrorMessage"
          },
          "examples": [
            {
              "name": "failed",
              "payload": {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "error": "The model backend is unavailable.",
                "code": "AGENT_ERROR"
              }
            },
            {
              "name": "timedOut",
              "payload": {
                "type": "error",
                "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2",
                "error": "Generation took longer than the runtime allows.",
                "code": "AGENT_TIMEOUT"
              }
            }
          ],
          "x-parser-unique-object-id": "agentError"
        },
        "ping": "$ref:$.channels.app.messages.ping"
      },
      "servers": [
        "$ref:$.servers.production",
        "$ref:$.servers.local"
      ],
      "bindings": "$ref:$.channels.app.bindings",
      "x-parser-unique-object-id": "agent"
    },
    "bus": {
      "address": "{prefix}:{to}",
      "title": "Between the nodes of one bridge (internal)",
      "summary": "Internal, not for clients. What the nodes of one bridge tell each other through Redis (O14).",
      "description": "**Internal**: between the nodes of one bridge (several nodes, O14), never for apps or agents, and not part of\nthe protocol's interface version (`/v1`). It is described here so that its messages are generated and checked\nlike every other message, and so that two releases of the bridge know what each other sends during a rolling\nupgrade (decision O16).\n\nEach message carries its kind `k` (short names: fragments cross the bus one message each) and the bus version\n`v` (`BusVersion`). A node receiving a version other than its own, or a kind it does not know, counts it\n(`bridge_cluster_messages_unknown_total`), logs it a burst at a time and drops it; a control question (`ctl`)\nwhose op it does not know is answered at once with a `ctl-ack` saying so (O16). Within a version, changes are\nadditive only and a node ignores fields it does not know.\n\nOver Redis each node listens on `{prefix}:node:{its id}` (messages to it alone: an agent's fragments, frames\nfor its connections) and `{prefix}:all` (presence and control, to every node). The messages to one channel\nwithin one turn of the event loop go as one PUBLISH, in a `BusEnvelope` (`f`: the sending node, `m`: the\nmessages in order). Delivery is at most once and in order from one node to another.\n",
      "x-internal": true,
      "servers": [
        "$ref:$.servers.cluster"
      ],
      "parameters": {
        "prefix": {
          "default": "bridge",
          "description": "The prefix of every key and channel, so that several bridges can share one Redis."
        },
        "to": {
          "description": "`node:` and the id of the node a message is for, or `all` for every other node.",
          "examples": [
            "node:3f9a1c0b7e",
            "all"
          ]
        }
      },
      "messages": {
        "toAgent": {
          "name": "to-agent",
          "title": "to-agent (node to node, internal)",
          "summary": "A frame for an agent connected to the receiving node, sent on to its socket as it is.",
          "payload": {
            "title": "BusToAgent",
            "x-internal": true,
            "type": "object",
            "description": "To the node an agent is connected to, a frame for it (an event), sent on to its socket as it is.",
            "required": [
              "k",
              "v",
              "agent",
              "frame"
            ],
            "properties": {
              "k": {
                "const": "to-agent",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-42>"
              },
              "v": {
                "title": "BusVersion",
                "x-internal": true,
                "type": "integer",
                "const": 1,
                "x-when-absent": 1,
                "description": "The bus version, carried as `v` by every bus message; a message of another version is dropped (O16). Only a\nchange an older node cannot ignore makes a new one: new kinds, ops and optional fields keep it. A message\nwithout `v` is of version 1 (`x-when-absent`): releases before the bus was versioned sent no `v`.\n",
                "x-parser-schema-id": "BusVersion"
              },
              "agent": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
              "frame": {
                "type": "string",
                "description": "The frame as the agent receives it (serialised JSON).",
                "x-parser-schema-id": "<anonymous-schema-43>"
              },
              "e": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "tp": {
                "type": "string",
                "pattern": "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$",
                "description": "The event's trace context as a W3C `traceparent`, when its home node traces events (O17); the receiving node's span of the delivery is its child. Never read from or written into the payload.",
                "x-parser-schema-id": "<anonymous-schema-44>"
              }
            },
            "x-parser-schema-id": "BusToAgent"
          },
          "examples": [
            {
              "name": "eventForAgent",
              "payload": {
                "k": "to-agent",
                "v": 1,
                "agent": "tutor-7k2m",
                "frame": "{\"type\":\"event\",\"event_id\":\"01JQ7ZK3M4N5P6Q7R8S9T0V1W2-3f9a1c0b7e\",\"app_id\":\"classroom-app\",\"thread_id\":\"lesson-42\",\"session_key\":\"svc:classroom-app:lesson-42\",\"payload\":{}}",
                "e": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2-3f9a1c0b7e"
              }
            }
          ],
          "x-parser-unique-object-id": "toAgent"
        },
        "toAgentAck": {
          "name": "to-agent-ack",
          "title": "to-agent-ack (node to node, internal)",
          "summary": "Whether an event sent to an agent's node reached the agent's socket (O21).",
          "payload": {
            "title": "BusToAgentAck",
            "x-internal": true,
            "type": "object",
            "description": "From an agent's node to the node an event lives on, in answer to a `to-agent` that named the event (`e`):\n`ok` true once the frame was written to the agent's socket, false when the agent was no longer connected to\nthe node (the event then ends at once with AGENT_OFFLINE, O21). An event whose node never answered ends so\nwhen that node is found gone.\n",
            "required": [
              "k",
              "v",
              "e",
              "ok"
            ],
            "properties": {
              "k": {
                "const": "to-agent-ack",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-45>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "e": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "ok": {
                "type": "boolean",
                "description": "Whether the event reached the agent's socket.",
                "x-parser-schema-id": "<anonymous-schema-46>"
              }
            },
            "x-parser-schema-id": "BusToAgentAck"
          },
          "examples": [
            {
              "name": "agentGone",
              "payload": {
                "k": "to-agent-ack",
                "v": 1,
                "e": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2-3f9a1c0b7e",
                "ok": false
              }
            }
          ],
          "x-parser-unique-object-id": "toAgentAck"
        },
        "agentMsg": {
          "name": "agent-msg",
          "title": "agent-msg (node to node, internal)",
          "summary": "An agent's token, reply or error, handed to the node its event lives on.",
          "payload": {
            "title": "BusAgentMessage",
            "x-internal": true,
            "type": "object",
            "description": "From the node an agent is connected to, to the node the event lives on (its id ends with that node's id): the\nagent's token, reply or error about it. One per fragment.\n",
            "required": [
              "k",
              "v",
              "agent",
              "msg"
            ],
            "properties": {
              "k": {
                "const": "agent-msg",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-47>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "agent": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
              "msg": {
                "title": "AgentEventMessage",
                "x-internal": true,
                "type": "object",
                "description": "An agent's message about one of its events, as the agent sent it (validated by its node).",
                "discriminator": "type",
                "oneOf": [
                  "$ref:$.channels.agent.messages.token.payload",
                  "$ref:$.channels.agent.messages.reply.payload",
                  "$ref:$.channels.agent.messages.agentError.payload"
                ],
                "x-parser-schema-id": "AgentEventMessage"
              }
            },
            "x-parser-schema-id": "BusAgentMessage"
          },
          "examples": [
            {
              "name": "fragment",
              "payload": {
                "k": "agent-msg",
                "v": 1,
                "agent": "tutor-7k2m",
                "msg": {
                  "type": "token",
                  "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2-3f9a1c0b7e",
                  "token": "A prime number "
                }
              }
            }
          ],
          "x-parser-unique-object-id": "agentMsg"
        },
        "agent": {
          "name": "agent",
          "title": "agent (node to node, internal)",
          "summary": "An agent connected to the sending node, or left it.",
          "payload": {
            "title": "BusAgentPresence",
            "x-internal": true,
            "type": "object",
            "description": "To every node: an agent connected to the sending node, or its connection there ended. Of two connections of\none agent, the one with the larger (stamp, node) is kept (O14).\n",
            "required": [
              "k",
              "v",
              "id",
              "online",
              "stamp"
            ],
            "properties": {
              "k": {
                "const": "agent",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-48>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "id": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
              "online": {
                "type": "boolean",
                "description": "Connected (true) or gone (false).",
                "x-parser-schema-id": "<anonymous-schema-49>"
              },
              "stamp": {
                "type": "integer",
                "minimum": 0,
                "description": "The connection's hybrid logical stamp (microseconds, or one more than the last heard).",
                "x-parser-schema-id": "<anonymous-schema-50>"
              }
            },
            "x-parser-schema-id": "BusAgentPresence"
          },
          "examples": [
            {
              "name": "connected",
              "payload": {
                "k": "agent",
                "v": 1,
                "id": "tutor-7k2m",
                "online": true,
                "stamp": 1767225600000000
              }
            }
          ],
          "x-parser-unique-object-id": "agent"
        },
        "app": {
          "name": "app",
          "title": "app (node to node, internal)",
          "summary": "An app's first connection to the sending node opened, or its last one closed.",
          "payload": {
            "title": "BusAppPresence",
            "x-internal": true,
            "type": "object",
            "description": "To every node: an app's first connection to the sending node opened, or its last one closed.",
            "required": [
              "k",
              "v",
              "id",
              "online"
            ],
            "properties": {
              "k": {
                "const": "app",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-51>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "id": "$ref:$.channels.agent.messages.event.payload.properties.app_id",
              "online": {
                "type": "boolean",
                "description": "Connected (true) or gone (false).",
                "x-parser-schema-id": "<anonymous-schema-52>"
              }
            },
            "x-parser-schema-id": "BusAppPresence"
          },
          "examples": [
            {
              "name": "connected",
              "payload": {
                "k": "app",
                "v": 1,
                "id": "classroom-app",
                "online": true
              }
            }
          ],
          "x-parser-unique-object-id": "app"
        },
        "hello": {
          "name": "hello",
          "title": "hello (node to node, internal)",
          "summary": "A node joined, or its link is back; each other node answers with a `snapshot`.",
          "payload": {
            "title": "BusHello",
            "x-internal": true,
            "type": "object",
            "description": "To every node, from a node that starts or whose link is back; each answers with its `snapshot`.",
            "required": [
              "k",
              "v"
            ],
            "properties": {
              "k": {
                "const": "hello",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-53>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v"
            },
            "x-parser-schema-id": "BusHello"
          },
          "examples": [
            {
              "name": "hello",
              "payload": {
                "k": "hello",
                "v": 1
              }
            }
          ],
          "x-parser-unique-object-id": "hello"
        },
        "cut": {
          "name": "cut",
          "title": "cut (node to node, internal)",
          "summary": "The sending node's link was cut and is back; what crossed between it and others in the gap may be lost.",
          "payload": {
            "title": "BusCut",
            "x-internal": true,
            "type": "object",
            "description": "To every node, from a node whose link was cut and is back: the events that depended on messages between it\nand the receiver end, since some may have been lost in the gap.\n",
            "required": [
              "k",
              "v"
            ],
            "properties": {
              "k": {
                "const": "cut",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-54>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v"
            },
            "x-parser-schema-id": "BusCut"
          },
          "examples": [
            {
              "name": "cut",
              "payload": {
                "k": "cut",
                "v": 1
              }
            }
          ],
          "x-parser-unique-object-id": "cut"
        },
        "snapshot": {
          "name": "snapshot",
          "title": "snapshot (node to node, internal)",
          "summary": "Every agent and app connected to the sending node, in answer to `hello`.",
          "payload": {
            "title": "BusSnapshot",
            "x-internal": true,
            "type": "object",
            "description": "The agents and apps connected to the sending node, to a node that said `hello` (or to all).",
            "required": [
              "k",
              "v",
              "agents",
              "apps"
            ],
            "properties": {
              "k": {
                "const": "snapshot",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-55>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "agents": {
                "type": "array",
                "description": "Each agent held by the sending node, with its connection's stamp.",
                "items": {
                  "type": "array",
                  "minItems": 2,
                  "additionalItems": false,
                  "items": [
                    "$ref:$.channels.app.messages.event.payload.properties.agent_id",
                    {
                      "type": "integer",
                      "minimum": 0,
                      "description": "The connection's stamp (as in `agent`).",
                      "x-parser-schema-id": "<anonymous-schema-58>"
                    }
                  ],
                  "x-parser-schema-id": "<anonymous-schema-57>"
                },
                "x-parser-schema-id": "<anonymous-schema-56>"
              },
              "apps": {
                "type": "array",
                "description": "Each app with a connection to the sending node.",
                "items": "$ref:$.channels.agent.messages.event.payload.properties.app_id",
                "x-parser-schema-id": "<anonymous-schema-59>"
              }
            },
            "x-parser-schema-id": "BusSnapshot"
          },
          "examples": [
            {
              "name": "snapshot",
              "payload": {
                "k": "snapshot",
                "v": 1,
                "agents": [
                  [
                    "tutor-7k2m",
                    1767225600000000
                  ]
                ],
                "apps": [
                  "classroom-app"
                ]
              }
            }
          ],
          "x-parser-unique-object-id": "snapshot"
        },
        "resume": {
          "name": "resume",
          "title": "resume (node to node, internal)",
          "summary": "A connection of the sending node resumes an event that lives on the receiving node (R8).",
          "payload": {
            "title": "BusResume",
            "x-internal": true,
            "type": "object",
            "description": "To the node an event lives on, from the node of the connection that resumes it (R8).",
            "required": [
              "k",
              "v",
              "c",
              "r"
            ],
            "properties": {
              "k": {
                "const": "resume",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-60>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "c": {
                "type": "integer",
                "minimum": 0,
                "description": "The resuming connection's id on the sending node.",
                "x-parser-schema-id": "<anonymous-schema-61>"
              },
              "r": {
                "title": "ResumeRequest",
                "x-internal": true,
                "type": "object",
                "description": "An app's `resume`, with the app it came from, handed to the node its event lives on (R8).",
                "required": [
                  "event_id",
                  "resume_token",
                  "after_seq",
                  "app_id"
                ],
                "properties": {
                  "event_id": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
                  "resume_token": "$ref:$.channels.app.messages.resume.payload.properties.resume_token",
                  "after_seq": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 9007199254740991,
                    "description": "As the app's `resume` says.",
                    "x-parser-schema-id": "<anonymous-schema-62>"
                  },
                  "app_id": "$ref:$.channels.agent.messages.event.payload.properties.app_id"
                },
                "x-parser-schema-id": "ResumeRequest"
              }
            },
            "x-parser-schema-id": "BusResume"
          },
          "examples": [
            {
              "name": "resume",
              "payload": {
                "k": "resume",
                "v": 1,
                "c": 17,
                "r": {
                  "event_id": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2-3f9a1c0b7e",
                  "resume_token": "6sQk1bZQz2m0yYl7c3Jw9AeHf4tXrUoVdPiN8KgLqE0",
                  "after_seq": 4,
                  "app_id": "classroom-app"
                }
              }
            }
          ],
          "x-parser-unique-object-id": "resume"
        },
        "toApp": {
          "name": "to-app",
          "title": "to-app (node to node, internal)",
          "summary": "Frames of an event for a connection of the receiving node that resumed it (R8), sent on in order.",
          "payload": {
            "title": "BusToApp",
            "x-internal": true,
            "type": "object",
            "description": "To the node of a connection that resumed an event, from the node the event lives on: the event's frames\nfor it, in order (the answer to `resume` first, then the live ones).\n",
            "required": [
              "k",
              "v",
              "c",
              "e",
              "f"
            ],
            "properties": {
              "k": {
                "const": "to-app",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-63>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "c": {
                "type": "integer",
                "minimum": 0,
                "description": "The resuming connection's id on the receiving node.",
                "x-parser-schema-id": "<anonymous-schema-64>"
              },
              "e": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "f": {
                "type": "array",
                "description": "The frames as the app receives them (serialised JSON).",
                "items": {
                  "type": "string",
                  "x-parser-schema-id": "<anonymous-schema-66>"
                },
                "x-parser-schema-id": "<anonymous-schema-65>"
              }
            },
            "x-parser-schema-id": "BusToApp"
          },
          "examples": [
            {
              "name": "frames",
              "payload": {
                "k": "to-app",
                "v": 1,
                "c": 17,
                "e": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2-3f9a1c0b7e",
                "f": [
                  "{\"type\":\"token\",\"event_id\":\"01JQ7ZK3M4N5P6Q7R8S9T0V1W2-3f9a1c0b7e\",\"agent_id\":\"tutor-7k2m\",\"token\":\"two \",\"seq\":5}"
                ]
              }
            }
          ],
          "x-parser-unique-object-id": "toApp"
        },
        "resumerGone": {
          "name": "resumer-gone",
          "title": "resumer-gone (node to node, internal)",
          "summary": "The connection that resumed an event no longer takes its frames (R8).",
          "payload": {
            "title": "BusResumerGone",
            "x-internal": true,
            "type": "object",
            "description": "To the node an event lives on: the connection that resumed it no longer takes its frames.",
            "required": [
              "k",
              "v",
              "c",
              "e"
            ],
            "properties": {
              "k": {
                "const": "resumer-gone",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-67>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "c": {
                "type": "integer",
                "minimum": 0,
                "description": "The resuming connection's id on the sending node.",
                "x-parser-schema-id": "<anonymous-schema-68>"
              },
              "e": "$ref:$.channels.app.messages.resume.payload.properties.event_id"
            },
            "x-parser-schema-id": "BusResumerGone"
          },
          "examples": [
            {
              "name": "gone",
              "payload": {
                "k": "resumer-gone",
                "v": 1,
                "c": 17,
                "e": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2-3f9a1c0b7e"
              }
            }
          ],
          "x-parser-unique-object-id": "resumerGone"
        },
        "cancel": {
          "name": "cancel",
          "title": "cancel (node to node, internal)",
          "summary": "A connection of the sending node that resumed an event cancels it; the event's home decides (S5).",
          "payload": {
            "title": "BusCancel",
            "x-internal": true,
            "type": "object",
            "description": "To the node an event lives on, from the node of the connection that resumed it: that connection cancels the event (S5). The home judges it as a cancel of its own connections; the answer (CANCELLED, the event's last frame, or CANCEL_REFUSED) comes back in a `to-app`.",
            "required": [
              "k",
              "v",
              "c",
              "e",
              "app"
            ],
            "properties": {
              "k": {
                "const": "cancel",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-69>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "c": {
                "type": "integer",
                "minimum": 0,
                "description": "The cancelling connection's id on the sending node.",
                "x-parser-schema-id": "<anonymous-schema-70>"
              },
              "e": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
              "app": "$ref:$.channels.agent.messages.event.payload.properties.app_id"
            },
            "x-parser-schema-id": "BusCancel"
          },
          "examples": [
            {
              "name": "cancel",
              "payload": {
                "k": "cancel",
                "v": 1,
                "c": 17,
                "e": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2-3f9a1c0b7e",
                "app": "classroom-app"
              }
            }
          ],
          "x-parser-unique-object-id": "cancel"
        },
        "cancelAgent": {
          "name": "cancel-agent",
          "title": "cancel-agent (node to node, internal)",
          "summary": "An event of an agent connected to the receiving node was cancelled; told to the agent if it opted in (S5).",
          "payload": {
            "title": "BusCancelAgent",
            "x-internal": true,
            "type": "object",
            "description": "From an event's home to the node its agent is connected to: the event was cancelled. That node sends `cancel` to the agent only if its connection was opened with `?cancel=1` (S4, S5).",
            "required": [
              "k",
              "v",
              "agent",
              "e"
            ],
            "properties": {
              "k": {
                "const": "cancel-agent",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-71>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "agent": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
              "e": "$ref:$.channels.app.messages.resume.payload.properties.event_id"
            },
            "x-parser-schema-id": "BusCancelAgent"
          },
          "examples": [
            {
              "name": "cancelAgent",
              "payload": {
                "k": "cancel-agent",
                "v": 1,
                "agent": "tutor-7k2m",
                "e": "01JQ7ZK3M4N5P6Q7R8S9T0V1W2-3f9a1c0b7e"
              }
            }
          ],
          "x-parser-unique-object-id": "cancelAgent"
        },
        "ctl": {
          "name": "ctl",
          "title": "ctl (node to node, internal)",
          "summary": "A change every node applies, or a question every node answers; each answers with one `ctl-ack`.",
          "payload": {
            "title": "BusControl",
            "x-internal": true,
            "type": "object",
            "description": "To every node: a change made through the sending node's admin API, or a question about every node. The\nsender waits for each live node's `ctl-ack`, at most 1 s.\n",
            "required": [
              "k",
              "v",
              "id",
              "change"
            ],
            "properties": {
              "k": {
                "const": "ctl",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-72>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "id": {
                "type": "integer",
                "minimum": 1,
                "description": "The question's number on the sending node, which the answers carry.",
                "x-parser-schema-id": "<anonymous-schema-73>"
              },
              "change": {
                "title": "ControlOp",
                "x-internal": true,
                "type": "object",
                "description": "What a `ctl` asks of every node: a change to apply, or a question to answer. A node that does not know the\nop answers at once that it does not (O16).\n",
                "discriminator": "op",
                "oneOf": [
                  {
                    "title": "DirectoryOp",
                    "x-internal": true,
                    "type": "object",
                    "description": "Read the registrations again from the shared database.",
                    "required": [
                      "op"
                    ],
                    "properties": {
                      "op": {
                        "const": "directory",
                        "description": "The op.",
                        "x-parser-schema-id": "<anonymous-schema-74>"
                      }
                    },
                    "x-parser-schema-id": "DirectoryOp"
                  },
                  {
                    "title": "RevokeOp",
                    "x-internal": true,
                    "type": "object",
                    "description": "Close a deactivated client's connections on this node (TOKEN_REVOKED) and refuse it from now on.",
                    "required": [
                      "op",
                      "kind",
                      "id",
                      "cause"
                    ],
                    "properties": {
                      "op": {
                        "const": "revoke",
                        "description": "The op.",
                        "x-parser-schema-id": "<anonymous-schema-75>"
                      },
                      "kind": {
                        "title": "ClientKind",
                        "type": "string",
                        "enum": [
                          "app",
                          "agent"
                        ],
                        "description": "The kinds of client, one per channel (`app` on `/ws/app`, `agent` on `/ws/agent`); the generator refuses\nan enum that differs from the channels' names.\n",
                        "x-parser-schema-id": "ClientKind"
                      },
                      "id": {
                        "type": "string",
                        "description": "The app_id or agent_id.",
                        "x-parser-schema-id": "<anonymous-schema-76>"
                      },
                      "cause": {
                        "title": "RevokeCause",
                        "x-internal": true,
                        "type": "string",
                        "enum": [
                          "deactivated",
                          "deleted with its organization"
                        ],
                        "description": "Why a client's token stopped working (TOKEN_REVOKED's text says it).",
                        "x-parser-schema-id": "RevokeCause"
                      }
                    },
                    "x-parser-schema-id": "RevokeOp"
                  },
                  {
                    "title": "DropSessionsOp",
                    "x-internal": true,
                    "type": "object",
                    "description": "Drop from memory the sessions of these apps and agents (deleted with their organization).",
                    "required": [
                      "op",
                      "ids"
                    ],
                    "properties": {
                      "op": {
                        "const": "drop-sessions",
                        "description": "The op.",
                        "x-parser-schema-id": "<anonymous-schema-77>"
                      },
                      "ids": {
                        "type": "array",
                        "description": "App and agent ids.",
                        "items": {
                          "type": "string",
                          "x-parser-schema-id": "<anonymous-schema-79>"
                        },
                        "x-parser-schema-id": "<anonymous-schema-78>"
                      }
                    },
                    "x-parser-schema-id": "DropSessionsOp"
                  },
                  {
                    "title": "ClockOp",
                    "x-internal": true,
                    "type": "object",
                    "description": "The test clock (`BRIDGE_TEST_CLOCK`) moved; move this node's to the same time.",
                    "required": [
                      "op",
                      "to"
                    ],
                    "properties": {
                      "op": {
                        "const": "clock",
                        "description": "The op.",
                        "x-parser-schema-id": "<anonymous-schema-80>"
                      },
                      "to": {
                        "type": "number",
                        "description": "The time to move to (epoch milliseconds).",
                        "x-parser-schema-id": "<anonymous-schema-81>"
                      }
                    },
                    "x-parser-schema-id": "ClockOp"
                  },
                  {
                    "title": "FlushEventLogOp",
                    "x-internal": true,
                    "type": "object",
                    "description": "Commit the event log's queued rows now (before a listing of the log).",
                    "required": [
                      "op"
                    ],
                    "properties": {
                      "op": {
                        "const": "flush-event-log",
                        "description": "The op.",
                        "x-parser-schema-id": "<anonymous-schema-82>"
                      }
                    },
                    "x-parser-schema-id": "FlushEventLogOp"
                  },
                  {
                    "title": "SessionsOp",
                    "x-internal": true,
                    "type": "object",
                    "description": "A question: the live sessions held in this node's memory.",
                    "required": [
                      "op",
                      "now",
                      "filter"
                    ],
                    "properties": {
                      "op": {
                        "const": "sessions",
                        "description": "The op.",
                        "x-parser-schema-id": "<anonymous-schema-83>"
                      },
                      "now": {
                        "type": "number",
                        "description": "The asking node's time (epoch milliseconds); sessions expired by then are left out.",
                        "x-parser-schema-id": "<anonymous-schema-84>"
                      },
                      "filter": {
                        "title": "SessionsFilter",
                        "x-internal": true,
                        "type": "object",
                        "description": "Which live sessions a listing asks for (none: all).",
                        "properties": {
                          "agent_id": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
                          "app_id": "$ref:$.channels.agent.messages.event.payload.properties.app_id"
                        },
                        "x-parser-schema-id": "SessionsFilter"
                      }
                    },
                    "x-parser-schema-id": "SessionsOp"
                  },
                  {
                    "title": "OverviewOp",
                    "x-internal": true,
                    "type": "object",
                    "description": "A question: this node's overview (D8).",
                    "required": [
                      "op"
                    ],
                    "properties": {
                      "op": {
                        "const": "overview",
                        "description": "The op.",
                        "x-parser-schema-id": "<anonymous-schema-85>"
                      },
                      "after": {
                        "type": "number",
                        "description": "Only the samples after this time (epoch milliseconds).",
                        "x-parser-schema-id": "<anonymous-schema-86>"
                      }
                    },
                    "x-parser-schema-id": "OverviewOp"
                  },
                  {
                    "title": "OrgLiveOp",
                    "x-internal": true,
                    "type": "object",
                    "description": "A question: this node's connections of an organization's apps and agents (D8).",
                    "required": [
                      "op",
                      "org_id"
                    ],
                    "properties": {
                      "op": {
                        "const": "org-live",
                        "description": "The op.",
                        "x-parser-schema-id": "<anonymous-schema-87>"
                      },
                      "org_id": {
                        "type": "string",
                        "description": "The organization.",
                        "x-parser-schema-id": "<anonymous-schema-88>"
                      }
                    },
                    "x-parser-schema-id": "OrgLiveOp"
                  },
                  {
                    "title": "DisconnectOp",
                    "x-internal": true,
                    "type": "object",
                    "description": "A question: close this connection if this node holds it (DISCONNECTED_BY_ADMIN, H8), and say what it was.",
                    "required": [
                      "op",
                      "connection_id"
                    ],
                    "properties": {
                      "op": {
                        "const": "disconnect",
                        "description": "The op.",
                        "x-parser-schema-id": "<anonymous-schema-89>"
                      },
                      "connection_id": {
                        "type": "string",
                        "description": "The connection's id (`connection_id` in openapi.yaml).",
                        "x-parser-schema-id": "<anonymous-schema-90>"
                      }
                    },
                    "x-parser-schema-id": "DisconnectOp"
                  }
                ],
                "x-parser-schema-id": "ControlOp"
              }
            },
            "x-parser-schema-id": "BusControl"
          },
          "examples": [
            {
              "name": "revoke",
              "payload": {
                "k": "ctl",
                "v": 1,
                "id": 3,
                "change": {
                  "op": "revoke",
                  "kind": "agent",
                  "id": "tutor-7k2m",
                  "cause": "deactivated"
                }
              }
            },
            {
              "name": "overview",
              "payload": {
                "k": "ctl",
                "v": 1,
                "id": 4,
                "change": {
                  "op": "overview"
                }
              }
            }
          ],
          "x-parser-unique-object-id": "ctl"
        },
        "ctlAck": {
          "name": "ctl-ack",
          "title": "ctl-ack (node to node, internal)",
          "summary": "A node applied a change or answers a question; or it does not know the op (O16).",
          "payload": {
            "title": "BusControlAck",
            "x-internal": true,
            "type": "object",
            "description": "The answer to a `ctl`, to the node that sent it.",
            "required": [
              "k",
              "v",
              "id"
            ],
            "properties": {
              "k": {
                "const": "ctl-ack",
                "description": "Kind.",
                "x-parser-schema-id": "<anonymous-schema-91>"
              },
              "v": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
              "id": {
                "type": "integer",
                "minimum": 1,
                "description": "The `ctl`'s id.",
                "x-parser-schema-id": "<anonymous-schema-92>"
              },
              "answer": {
                "description": "The answer to a question, absent for a change: to `sessions` the node's live sessions (`Session` of\nopenapi.yaml, its times in epoch milliseconds); to `overview` the node's `OverviewNode` (openapi.yaml); to\n`org-live` the node's connections of the organization (its id, each client with its connection's id and\ntimes in epoch milliseconds, each app's count); to `disconnect` the connection it closed (`ClosedConnection`\nof openapi.yaml, `connected_at` in epoch milliseconds), absent when the node does not hold it.\n",
                "x-parser-schema-id": "<anonymous-schema-93>"
              },
              "unknown": {
                "const": true,
                "description": "Present only when the node does not know the `ctl`'s op (a newer node asked, O16): it applied nothing\nand has no answer.\n",
                "x-parser-schema-id": "<anonymous-schema-94>"
              }
            },
            "x-parser-schema-id": "BusControlAck"
          },
          "examples": [
            {
              "name": "applied",
              "payload": {
                "k": "ctl-ack",
                "v": 1,
                "id": 3
              }
            },
            {
              "name": "unknownOp",
              "payload": {
                "k": "ctl-ack",
                "v": 1,
                "id": 5,
                "unknown": true
              }
            }
          ],
          "x-parser-unique-object-id": "ctlAck"
        }
      },
      "x-parser-unique-object-id": "bus"
    }
  },
  "operations": {
    "receiveEvent": {
      "action": "receive",
      "channel": "$ref:$.channels.app",
      "title": "App sends an event",
      "summary": "The app addresses an event to one agent; the service answers with exactly one `accepted` or one `error`.",
      "messages": [
        "$ref:$.channels.app.messages.event"
      ],
      "reply": {
        "channel": "$ref:$.channels.app",
        "messages": [
          "$ref:$.channels.app.messages.accepted",
          "$ref:$.channels.app.messages.error"
        ]
      },
      "x-parser-unique-object-id": "receiveEvent"
    },
    "receiveDiscover": {
      "action": "receive",
      "channel": "$ref:$.channels.app",
      "title": "App asks which agents it may use",
      "messages": [
        "$ref:$.channels.app.messages.discover"
      ],
      "reply": {
        "channel": "$ref:$.channels.app",
        "messages": [
          "$ref:$.channels.app.messages.agents"
        ]
      },
      "x-parser-unique-object-id": "receiveDiscover"
    },
    "receiveResume": {
      "action": "receive",
      "channel": "$ref:$.channels.app",
      "title": "App takes back an event after a dropped connection (resume extension)",
      "summary": "On a connection opened with `?resume=1`: the service sends the event's fragments after `after_seq`, then its\nlive fragments, then its reply or error; or one `error` (RESUME_GAP, which ends the event for the app, or\nRESUME_REFUSED).\n",
      "messages": [
        "$ref:$.channels.app.messages.resume"
      ],
      "reply": {
        "channel": "$ref:$.channels.app",
        "messages": [
          "$ref:$.channels.app.messages.token",
          "$ref:$.channels.app.messages.reply",
          "$ref:$.channels.app.messages.error"
        ]
      },
      "x-parser-unique-object-id": "receiveResume"
    },
    "receiveCancel": {
      "action": "receive",
      "channel": "$ref:$.channels.app",
      "title": "App cancels an event in flight (cancel extension)",
      "summary": "For an event in flight of this connection: one `error` CANCELLED, the event's last frame (S2). Otherwise one\n`error` CANCEL_REFUSED about the frame (S3).\n",
      "messages": [
        "$ref:$.channels.app.messages.cancel"
      ],
      "reply": {
        "channel": "$ref:$.channels.app",
        "messages": [
          "$ref:$.channels.app.messages.error"
        ]
      },
      "x-parser-unique-object-id": "receiveCancel"
    },
    "receiveAppPing": {
      "action": "receive",
      "channel": "$ref:$.channels.app",
      "title": "App heartbeat",
      "messages": [
        "$ref:$.channels.app.messages.ping"
      ],
      "reply": {
        "channel": "$ref:$.channels.app",
        "messages": [
          "$ref:$.channels.app.messages.pong"
        ]
      },
      "x-parser-unique-object-id": "receiveAppPing"
    },
    "sendAccepted": {
      "action": "send",
      "channel": "$ref:$.channels.app",
      "title": "Service accepts an event",
      "messages": [
        "$ref:$.channels.app.messages.accepted"
      ],
      "x-parser-unique-object-id": "sendAccepted"
    },
    "sendToken": {
      "action": "send",
      "channel": "$ref:$.channels.app",
      "title": "Service forwards a token fragment",
      "messages": [
        "$ref:$.channels.app.messages.token"
      ],
      "x-parser-unique-object-id": "sendToken"
    },
    "sendReply": {
      "action": "send",
      "channel": "$ref:$.channels.app",
      "title": "Service forwards the agent's final reply",
      "messages": [
        "$ref:$.channels.app.messages.reply"
      ],
      "x-parser-unique-object-id": "sendReply"
    },
    "sendError": {
      "action": "send",
      "channel": "$ref:$.channels.app",
      "title": "Service reports an error to the app",
      "messages": [
        "$ref:$.channels.app.messages.error"
      ],
      "x-parser-unique-object-id": "sendError"
    },
    "sendAgents": {
      "action": "send",
      "channel": "$ref:$.channels.app",
      "title": "Service lists the agents the app may use",
      "messages": [
        "$ref:$.channels.app.messages.agents"
      ],
      "x-parser-unique-object-id": "sendAgents"
    },
    "sendAppPong": {
      "action": "send",
      "channel": "$ref:$.channels.app",
      "title": "Service answers an app heartbeat",
      "messages": [
        "$ref:$.channels.app.messages.pong"
      ],
      "x-parser-unique-object-id": "sendAppPong"
    },
    "sendEventToAgent": {
      "action": "send",
      "channel": "$ref:$.channels.agent",
      "title": "Service delivers an event to the agent",
      "messages": [
        "$ref:$.channels.agent.messages.event"
      ],
      "x-parser-unique-object-id": "sendEventToAgent"
    },
    "sendCancelToAgent": {
      "action": "send",
      "channel": "$ref:$.channels.agent",
      "title": "Service tells the agent that an event was cancelled (cancel extension)",
      "summary": "Only on a connection opened with `?cancel=1` (S1, S4).",
      "messages": [
        "$ref:$.channels.agent.messages.cancel"
      ],
      "x-parser-unique-object-id": "sendCancelToAgent"
    },
    "sendAgentPong": {
      "action": "send",
      "channel": "$ref:$.channels.agent",
      "title": "Service answers an agent heartbeat",
      "messages": [
        "$ref:$.channels.app.messages.pong"
      ],
      "x-parser-unique-object-id": "sendAgentPong"
    },
    "sendErrorToAgent": {
      "action": "send",
      "channel": "$ref:$.channels.agent",
      "title": "Service reports an error to the agent",
      "messages": [
        "$ref:$.channels.agent.messages.error"
      ],
      "x-parser-unique-object-id": "sendErrorToAgent"
    },
    "receiveAgentToken": {
      "action": "receive",
      "channel": "$ref:$.channels.agent",
      "title": "Agent streams a token fragment",
      "messages": [
        "$ref:$.channels.agent.messages.token"
      ],
      "x-parser-unique-object-id": "receiveAgentToken"
    },
    "receiveAgentReply": {
      "action": "receive",
      "channel": "$ref:$.channels.agent",
      "title": "Agent sends its final reply",
      "messages": [
        "$ref:$.channels.agent.messages.reply"
      ],
      "x-parser-unique-object-id": "receiveAgentReply"
    },
    "receiveAgentError": {
      "action": "receive",
      "channel": "$ref:$.channels.agent",
      "title": "Agent reports that processing failed",
      "messages": [
        "$ref:$.channels.agent.messages.agentError"
      ],
      "x-parser-unique-object-id": "receiveAgentError"
    },
    "receiveAgentPing": {
      "action": "receive",
      "channel": "$ref:$.channels.agent",
      "title": "Agent heartbeat",
      "messages": [
        "$ref:$.channels.app.messages.ping"
      ],
      "reply": {
        "channel": "$ref:$.channels.agent",
        "messages": [
          "$ref:$.channels.app.messages.pong"
        ]
      },
      "x-parser-unique-object-id": "receiveAgentPing"
    },
    "sendToNode": {
      "action": "send",
      "channel": "$ref:$.channels.bus",
      "title": "A node tells another node, or every other node (internal)",
      "messages": [
        "$ref:$.channels.bus.messages.toAgent",
        "$ref:$.channels.bus.messages.toAgentAck",
        "$ref:$.channels.bus.messages.agentMsg",
        "$ref:$.channels.bus.messages.agent",
        "$ref:$.channels.bus.messages.app",
        "$ref:$.channels.bus.messages.hello",
        "$ref:$.channels.bus.messages.cut",
        "$ref:$.channels.bus.messages.snapshot",
        "$ref:$.channels.bus.messages.resume",
        "$ref:$.channels.bus.messages.toApp",
        "$ref:$.channels.bus.messages.resumerGone",
        "$ref:$.channels.bus.messages.cancel",
        "$ref:$.channels.bus.messages.cancelAgent",
        "$ref:$.channels.bus.messages.ctl",
        "$ref:$.channels.bus.messages.ctlAck"
      ],
      "x-parser-unique-object-id": "sendToNode"
    },
    "receiveFromNode": {
      "action": "receive",
      "channel": "$ref:$.channels.bus",
      "title": "A node hears another node (internal)",
      "summary": "A message of another version, or of a kind this node does not know, is counted, logged and dropped; a `ctl` of\nan op it does not know is answered at once by a `ctl-ack` saying so (O16).\n",
      "messages": [
        "$ref:$.channels.bus.messages.toAgent",
        "$ref:$.channels.bus.messages.toAgentAck",
        "$ref:$.channels.bus.messages.agentMsg",
        "$ref:$.channels.bus.messages.agent",
        "$ref:$.channels.bus.messages.app",
        "$ref:$.channels.bus.messages.hello",
        "$ref:$.channels.bus.messages.cut",
        "$ref:$.channels.bus.messages.snapshot",
        "$ref:$.channels.bus.messages.resume",
        "$ref:$.channels.bus.messages.toApp",
        "$ref:$.channels.bus.messages.resumerGone",
        "$ref:$.channels.bus.messages.cancel",
        "$ref:$.channels.bus.messages.cancelAgent",
        "$ref:$.channels.bus.messages.ctl",
        "$ref:$.channels.bus.messages.ctlAck"
      ],
      "x-parser-unique-object-id": "receiveFromNode"
    }
  },
  "components": {
    "securitySchemes": {
      "bearerToken": "$ref:$.servers.production.security[0]",
      "queryToken": "$ref:$.servers.production.security[1]"
    },
    "channelBindings": {
      "handshake": "$ref:$.channels.app.bindings"
    },
    "messages": {
      "Event": "$ref:$.channels.app.messages.event",
      "Resume": "$ref:$.channels.app.messages.resume",
      "Cancel": "$ref:$.channels.app.messages.cancel",
      "Discover": "$ref:$.channels.app.messages.discover",
      "Ping": "$ref:$.channels.app.messages.ping",
      "Pong": "$ref:$.channels.app.messages.pong",
      "Accepted": "$ref:$.channels.app.messages.accepted",
      "Token": "$ref:$.channels.app.messages.token",
      "Reply": "$ref:$.channels.app.messages.reply",
      "Error": "$ref:$.channels.app.messages.error",
      "Agents": "$ref:$.channels.app.messages.agents",
      "EventToAgent": "$ref:$.channels.agent.messages.event",
      "CancelToAgent": "$ref:$.channels.agent.messages.cancel",
      "ErrorToAgent": "$ref:$.channels.agent.messages.error",
      "AgentToken": "$ref:$.channels.agent.messages.token",
      "AgentReply": "$ref:$.channels.agent.messages.reply",
      "AgentError": "$ref:$.channels.agent.messages.agentError",
      "BusToAgent": "$ref:$.channels.bus.messages.toAgent",
      "BusToAgentAck": "$ref:$.channels.bus.messages.toAgentAck",
      "BusAgentMessage": "$ref:$.channels.bus.messages.agentMsg",
      "BusAgentPresence": "$ref:$.channels.bus.messages.agent",
      "BusAppPresence": "$ref:$.channels.bus.messages.app",
      "BusHello": "$ref:$.channels.bus.messages.hello",
      "BusCut": "$ref:$.channels.bus.messages.cut",
      "BusSnapshot": "$ref:$.channels.bus.messages.snapshot",
      "BusResume": "$ref:$.channels.bus.messages.resume",
      "BusToApp": "$ref:$.channels.bus.messages.toApp",
      "BusResumerGone": "$ref:$.channels.bus.messages.resumerGone",
      "BusCancel": "$ref:$.channels.bus.messages.cancel",
      "BusCancelAgent": "$ref:$.channels.bus.messages.cancelAgent",
      "BusControl": "$ref:$.channels.bus.messages.ctl",
      "BusControlAck": "$ref:$.channels.bus.messages.ctlAck"
    },
    "schemas": {
      "AgentId": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
      "ClientKind": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[1].properties.kind",
      "AppId": "$ref:$.channels.agent.messages.event.payload.properties.app_id",
      "ThreadId": "$ref:$.channels.app.messages.event.payload.properties.thread_id",
      "EventId": "$ref:$.channels.app.messages.resume.payload.properties.event_id",
      "SessionKey": "$ref:$.channels.app.messages.accepted.payload.properties.session_key",
      "AgentSessionKey": "$ref:$.channels.agent.messages.event.payload.properties.session_key",
      "Payload": "$ref:$.channels.app.messages.event.payload.properties.payload",
      "ErrorCode": "$ref:$.channels.app.messages.error.payload.properties.code",
      "EventMessage": "$ref:$.channels.app.messages.event.payload",
      "ResumeToken": "$ref:$.channels.app.messages.resume.payload.properties.resume_token",
      "StreamSeq": "$ref:$.channels.app.messages.token.payload.properties.seq",
      "ResumeMessage": "$ref:$.channels.app.messages.resume.payload",
      "CancelMessage": "$ref:$.channels.app.messages.cancel.payload",
      "DiscoverMessage": "$ref:$.channels.app.messages.discover.payload",
      "PingMessage": "$ref:$.channels.app.messages.ping.payload",
      "PongMessage": "$ref:$.channels.app.messages.pong.payload",
      "AcceptedMessage": "$ref:$.channels.app.messages.accepted.payload",
      "TokenMessage": "$ref:$.channels.app.messages.token.payload",
      "ReplyMetadata": "$ref:$.channels.app.messages.reply.payload.properties.metadata",
      "ReplyMessage": "$ref:$.channels.app.messages.reply.payload",
      "ErrorMetadata": "$ref:$.channels.app.messages.error.payload.properties.metadata",
      "ErrorMessage": "$ref:$.channels.app.messages.error.payload",
      "AgentSummary": "$ref:$.channels.app.messages.agents.payload.properties.agents.items",
      "AgentsMessage": "$ref:$.channels.app.messages.agents.payload",
      "EventToAgentMessage": "$ref:$.channels.agent.messages.event.payload",
      "CancelToAgentMessage": "$ref:$.channels.agent.messages.cancel.payload",
      "ErrorToAgentMessage": "$ref:$.channels.agent.messages.error.payload",
      "AgentTokenMessage": "$ref:$.channels.agent.messages.token.payload",
      "AgentReplyMetadata": "$ref:$.channels.agent.messages.reply.payload.properties.metadata",
      "AgentReplyMessage": "$ref:$.channels.agent.messages.reply.payload",
      "AgentErrorMessage": "$ref:$.channels.agent.messages.agentError.payload",
      "BusVersion": "$ref:$.channels.bus.messages.toAgent.payload.properties.v",
      "BusEnvelope": {
        "title": "BusEnvelope",
        "x-internal": true,
        "type": "object",
        "description": "One Redis PUBLISH: every message a node sends to one channel within one turn of its event loop, in order.\nA node reads each message's `v` and `k` before anything else of it (O16).\n",
        "required": [
          "f",
          "m"
        ],
        "properties": {
          "f": {
            "type": "string",
            "description": "The id of the sending node (`NODE_ID`).",
            "x-parser-schema-id": "<anonymous-schema-95>"
          },
          "i": {
            "type": "string",
            "description": "The sending process's incarnation: random, new at every start. A node that hears a node speak with\nanother incarnation than before takes it for a restart under the same `NODE_ID`, and drops what the\nprevious process held (its agents, apps and events on their way to it) before reading on (O22).\n",
            "x-parser-schema-id": "<anonymous-schema-96>"
          },
          "m": {
            "type": "array",
            "description": "The messages, in the order they were sent (each a message of the `bus` channel).",
            "items": {
              "title": "BusMessageHead",
              "x-internal": true,
              "type": "object",
              "description": "What a node reads of any bus message before it knows its kind: the kind and the version. The rest is read\nonly once both are known (O16).\n",
              "required": [
                "k",
                "v"
              ],
              "properties": {
                "k": {
                  "type": "string",
                  "description": "The kind: short, since fragments cross the bus one message each. The kinds this version knows are the `k`\nconstants of the `bus` channel's messages.\n",
                  "x-parser-schema-id": "<anonymous-schema-98>"
                },
                "v": {
                  "type": "integer",
                  "description": "The sender's bus version (`BusVersion`).",
                  "x-parser-schema-id": "<anonymous-schema-99>"
                }
              },
              "examples": [
                {
                  "k": "agent-msg",
                  "v": 1
                }
              ],
              "x-parser-schema-id": "BusMessageHead"
            },
            "x-parser-schema-id": "<anonymous-schema-97>"
          }
        },
        "examples": [
          {
            "f": "3f9a1c0b7e",
            "m": [
              {
                "k": "hello",
                "v": 1
              }
            ]
          }
        ],
        "x-parser-schema-id": "BusEnvelope"
      },
      "BusMessageHead": "$ref:$.components.schemas.BusEnvelope.properties.m.items",
      "BusToAgent": "$ref:$.channels.bus.messages.toAgent.payload",
      "BusToAgentAck": "$ref:$.channels.bus.messages.toAgentAck.payload",
      "AgentEventMessage": "$ref:$.channels.bus.messages.agentMsg.payload.properties.msg",
      "BusAgentMessage": "$ref:$.channels.bus.messages.agentMsg.payload",
      "BusAgentPresence": "$ref:$.channels.bus.messages.agent.payload",
      "BusAppPresence": "$ref:$.channels.bus.messages.app.payload",
      "BusHello": "$ref:$.channels.bus.messages.hello.payload",
      "BusCut": "$ref:$.channels.bus.messages.cut.payload",
      "BusSnapshot": "$ref:$.channels.bus.messages.snapshot.payload",
      "ResumeRequest": "$ref:$.channels.bus.messages.resume.payload.properties.r",
      "BusResume": "$ref:$.channels.bus.messages.resume.payload",
      "BusToApp": "$ref:$.channels.bus.messages.toApp.payload",
      "BusResumerGone": "$ref:$.channels.bus.messages.resumerGone.payload",
      "BusCancel": "$ref:$.channels.bus.messages.cancel.payload",
      "BusCancelAgent": "$ref:$.channels.bus.messages.cancelAgent.payload",
      "RevokeCause": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[1].properties.cause",
      "SessionsFilter": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[5].properties.filter",
      "DirectoryOp": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[0]",
      "RevokeOp": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[1]",
      "DropSessionsOp": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[2]",
      "ClockOp": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[3]",
      "FlushEventLogOp": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[4]",
      "SessionsOp": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[5]",
      "OverviewOp": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[6]",
      "OrgLiveOp": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[7]",
      "DisconnectOp": "$ref:$.channels.bus.messages.ctl.payload.properties.change.oneOf[8]",
      "ControlOp": "$ref:$.channels.bus.messages.ctl.payload.properties.change",
      "BusControl": "$ref:$.channels.bus.messages.ctl.payload",
      "BusControlAck": "$ref:$.channels.bus.messages.ctlAck.payload",
      "ConnectorConfig": {
        "title": "ConnectorConfig",
        "type": "object",
        "additionalProperties": false,
        "description": "The agent connector's configuration file (JSON or YAML). `${VAR}` references in string values are\ninterpolated from the environment before validation; a missing variable is a start-up error, never an\nempty string. Unknown fields are rejected so that a misspelt option fails loudly.\n",
        "required": [
          "connection",
          "agents"
        ],
        "properties": {
          "connection": {
            "title": "ConnectorConnection",
            "type": "object",
            "additionalProperties": false,
            "description": "Where the connector connects and how it reconnects.",
            "required": [
              "url"
            ],
            "properties": {
              "url": {
                "type": "string",
                "pattern": "^wss?://",
                "description": "The bridge's agent endpoint, `{base_url}/ws/agent`.",
                "x-parser-schema-id": "<anonymous-schema-100>"
              },
              "reconnect": {
                "title": "ConnectorReconnect",
                "type": "object",
                "additionalProperties": false,
                "description": "Reconnection with exponential backoff (delay doubles from baseDelayMs up to maxDelayMs).",
                "properties": {
                  "enabled": {
                    "type": "boolean",
                    "default": true,
                    "description": "Whether to reconnect after the connection drops.",
                    "x-parser-schema-id": "<anonymous-schema-101>"
                  },
                  "maxRetries": {
                    "type": "integer",
                    "minimum": -1,
                    "default": 5,
                    "description": "Attempts before giving up (x-limits.connectorReconnectMaxAttempts); 0 never reconnects, and -1 reconnects for ever, each delay still capped at maxDelayMs (decision C7). A connection error with `retry: false` (W19) ends the connection whatever this says.",
                    "x-parser-schema-id": "<anonymous-schema-102>"
                  },
                  "baseDelayMs": {
                    "type": "integer",
                    "minimum": 1,
                    "default": 1000,
                    "description": "First delay (x-limits.reconnectBaseDelayMs).",
                    "x-parser-schema-id": "<anonymous-schema-103>"
                  },
                  "maxDelayMs": {
                    "type": "integer",
                    "minimum": 1,
                    "default": 60000,
                    "description": "Cap of the delay (x-limits.reconnectMaxDelayMs).",
                    "x-parser-schema-id": "<anonymous-schema-104>"
                  }
                },
                "examples": [
                  {
                    "enabled": true,
                    "maxRetries": 5,
                    "baseDelayMs": 1000,
                    "maxDelayMs": 60000
                  }
                ],
                "x-parser-schema-id": "ConnectorReconnect"
              }
            },
            "examples": [
              {
                "url": "wss://bridge.example.com/v1/ws/agent"
              }
            ],
            "x-parser-schema-id": "ConnectorConnection"
          },
          "agents": {
            "type": "array",
            "minItems": 1,
            "description": "The agents this connector runs; one connection each.",
            "items": {
              "title": "ConnectorAgent",
              "type": "object",
              "additionalProperties": false,
              "description": "One agent run by the connector.",
              "required": [
                "agent_id",
                "token"
              ],
              "properties": {
                "agent_id": "$ref:$.channels.app.messages.event.payload.properties.agent_id",
                "token": {
                  "type": "string",
                  "pattern": "^rla_[a-z0-9-]{1,64}_[A-Za-z0-9]{32,}$",
                  "description": "The agent's token (`rla_{agent_id}_{secret}`); keep it in the environment, e.g. `${TUTOR_TOKEN}`.",
                  "x-parser-schema-id": "<anonymous-schema-106>"
                },
                "ttl_days": {
                  "type": "integer",
                  "minimum": 1,
                  "default": 14,
                  "description": "Session TTL the connector tracks (x-limits.sessionTtlDefaultDays).",
                  "x-parser-schema-id": "<anonymous-schema-107>"
                },
                "context": {
                  "type": "object",
                  "additionalProperties": true,
                  "description": "Passed to the agent runtime when a session is created.",
                  "x-parser-schema-id": "<anonymous-schema-108>"
                }
              },
              "examples": [
                {
                  "agent_id": "tutor-7k2m",
                  "token": "rla_tutor-7k2m_Zx8kQ2mV7pL4nR9sT1wY6bC3dF5gH0jK2aE4iO8uQ1z"
                }
              ],
              "x-parser-schema-id": "ConnectorAgent"
            },
            "x-parser-schema-id": "<anonymous-schema-105>"
          },
          "health": {
            "title": "ConnectorHealthEndpoint",
            "type": "object",
            "additionalProperties": false,
            "description": "The optional HTTP health endpoint; present means enabled.",
            "required": [
              "port"
            ],
            "properties": {
              "port": {
                "type": "integer",
                "minimum": 0,
                "maximum": 65535,
                "description": "TCP port to listen on (0 picks a free one).",
                "x-parser-schema-id": "<anonymous-schema-109>"
              },
              "path": {
                "type": "string",
                "pattern": "^/",
                "default": "/health",
                "description": "Path of the endpoint.",
                "x-parser-schema-id": "<anonymous-schema-110>"
              },
              "host": {
                "type": "string",
                "minLength": 1,
                "default": "127.0.0.1",
                "description": "Interface to listen on: this machine only by default, since the agents' state is nobody else's business; 0.0.0.0 (or ::) for every interface, e.g. for a probe from outside a container.",
                "x-parser-schema-id": "<anonymous-schema-111>"
              }
            },
            "examples": [
              {
                "port": 8787,
                "path": "/health"
              },
              {
                "port": 8787,
                "path": "/health",
                "host": "0.0.0.0"
              }
            ],
            "x-parser-schema-id": "ConnectorHealthEndpoint"
          }
        },
        "examples": [
          {
            "connection": {
              "url": "wss://bridge.example.com/v1/ws/agent",
              "reconnect": {
                "enabled": true,
                "maxRetries": 5,
                "baseDelayMs": 1000,
                "maxDelayMs": 60000
              }
            },
            "agents": [
              {
                "agent_id": "tutor-7k2m",
                "token": "rla_tutor-7k2m_Zx8kQ2mV7pL4nR9sT1wY6bC3dF5gH0jK2aE4iO8uQ1z",
                "ttl_days": 30,
                "context": {
                  "persona": "patient maths tutor"
                }
              }
            ],
            "health": {
              "port": 8787,
              "path": "/health"
            }
          }
        ],
        "x-parser-schema-id": "ConnectorConfig"
      },
      "ConnectorConnection": "$ref:$.components.schemas.ConnectorConfig.properties.connection",
      "ConnectorReconnect": "$ref:$.components.schemas.ConnectorConfig.properties.connection.properties.reconnect",
      "ConnectorAgent": "$ref:$.components.schemas.ConnectorConfig.properties.agents.items",
      "ConnectorHealthEndpoint": "$ref:$.components.schemas.ConnectorConfig.properties.health",
      "ConnectorHealth": {
        "title": "ConnectorHealth",
        "type": "object",
        "additionalProperties": false,
        "description": "What the connector's health endpoint returns.",
        "required": [
          "status",
          "agents"
        ],
        "properties": {
          "status": {
            "title": "ConnectorStatus",
            "type": "string",
            "enum": [
              "ok",
              "degraded",
              "down"
            ],
            "description": "`ok`: every agent connected; `degraded`: some; `down`: none.",
            "examples": [
              "ok"
            ],
            "x-parser-schema-id": "ConnectorStatus"
          },
          "agents": {
            "type": "object",
            "description": "Per agent_id, its connection state.",
            "additionalProperties": {
              "title": "ConnectorAgentHealth",
              "type": "object",
              "additionalProperties": false,
              "description": "One agent's connection state.",
              "required": [
                "connected"
              ],
              "properties": {
                "connected": {
                  "type": "boolean",
                  "description": "Whether the agent's connection is open and authenticated.",
                  "x-parser-schema-id": "<anonymous-schema-113>"
                },
                "lastPing": {
                  "type": "string",
                  "format": "date-time",
                  "description": "When the last `pong` arrived.",
                  "x-parser-schema-id": "<anonymous-schema-114>"
                },
                "lastError": {
                  "type": "string",
                  "description": "The last connection error, if the agent is not connected.",
                  "x-parser-schema-id": "<anonymous-schema-115>"
                }
              },
              "examples": [
                {
                  "connected": true,
                  "lastPing": "2026-11-22T06:00:00.000Z"
                }
              ],
              "x-parser-schema-id": "ConnectorAgentHealth"
            },
            "x-parser-schema-id": "<anonymous-schema-112>"
          }
        },
        "examples": [
          {
            "status": "degraded",
            "agents": {
              "tutor-7k2m": {
                "connected": true,
                "lastPing": "2026-11-22T06:00:00.000Z"
              },
              "essay-coach-3p9x": {
                "connected": false,
                "lastError": "UNAUTHORIZED: The token is wrong, expired or rotated out."
              }
            }
          }
        ],
        "x-parser-schema-id": "ConnectorHealth"
      },
      "ConnectorStatus": "$ref:$.components.schemas.ConnectorHealth.properties.status",
      "ConnectorAgentHealth": "$ref:$.components.schemas.ConnectorHealth.properties.agents.additionalProperties"
    }
  },
  "x-error-catalogue": {
    "AGENT_NOT_FOUND": {
      "origin": "protocol",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": false,
      "messages": {
        "unknown": "Agent {agent_id} does not exist in this organization."
      },
      "cause": "The agent_id does not exist in the app's organization (an agent of another organization is reported the same way, never revealed)."
    },
    "AGENT_OFFLINE": {
      "origin": "protocol",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": true,
      "messages": {
        "not_connected": "Agent {agent_id} is not connected.",
        "dropped": "Agent {agent_id} disconnected before answering and did not come back within {seconds} s.",
        "revoked": "Agent {agent_id} was {cause} before answering.",
        "cut_off": "Agent {agent_id} is connected to another node of this bridge, and the link between the nodes was cut while the event was in flight; its answer may be lost. Send the event again.",
        "not_reached": "Agent {agent_id} left its node of this bridge before the event reached it. Send the event again."
      },
      "cause": "The agent is not connected when the event arrives, or its connection dropped with the event in flight and it did not come back within agentReconnectGraceMs (on several nodes, also when the agent's node stops answering, or the link to it is cut with the event in flight; and at once when the event, on its way to the agent's node, arrived after the agent had left it or the node went away before it arrived, O21)."
    },
    "AGENT_TIMEOUT": {
      "origin": "protocol",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": true,
      "messages": {
        "no_answer": "Agent {agent_id} did not answer within {seconds} s."
      },
      "cause": "No reply within the agent timeout (agentTimeoutMs), or the agent itself reported AGENT_TIMEOUT."
    },
    "AGENT_ERROR": {
      "origin": "protocol",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": false,
      "cause": "The agent sent an error message for the event."
    },
    "PERMISSION_DENIED": {
      "origin": "protocol",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": false,
      "messages": {
        "not_allowed": "App {app_id} is not on the allowlist of agent {agent_id}."
      },
      "cause": "The app is not on the agent's allowlist."
    },
    "INVALID_AGENT_ID": {
      "origin": "protocol",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": false,
      "messages": {
        "invalid": "Invalid {type}: {detail}."
      },
      "cause": "The event's agent_id is missing, not a string, longer than 64 characters, or has characters other than lowercase letters, digits and hyphens."
    },
    "INVALID_THREAD_ID": {
      "origin": "protocol",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": false,
      "messages": {
        "invalid": "Invalid {type}: {detail}."
      },
      "cause": "The event's thread_id is missing, not a string, empty, longer than 121 characters, or contains control characters or unpaired surrogates."
    },
    "PAYLOAD_TOO_LARGE": {
      "origin": "protocol",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": false,
      "messages": {
        "too_large": "Payload is {bytes} bytes of JSON; the limit is {limit}."
      },
      "cause": "The event's payload is over payloadMaxBytes (64000) bytes of compact JSON; exactly 64000 is accepted."
    },
    "RATE_LIMIT_EXCEEDED": {
      "origin": "protocol",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": true,
      "messages": {
        "too_fast": "Too many events from app {app_id}; retry after {seconds} s."
      },
      "cause": "The app sends events faster than its rate limit; metadata.retry_after_seconds says when to retry."
    },
    "TOO_MANY_EVENTS": {
      "origin": "decision",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": true,
      "messages": {
        "app": "App {app_id} has {count} events in flight, the limit; send more once earlier events have ended.",
        "agent": "Agent {agent_id} has {count} events in flight, the limit; send more once it has answered some.",
        "total": "This node of the bridge has {count} events in flight, its limit; send it again once earlier events have ended.",
        "payloads": "This node of the bridge holds {bytes} bytes of payloads of events in flight, its limit; send it again once earlier events have ended."
      },
      "cause": "The app already has eventsInFlightPerAppMax (1000) events in flight (accepted and not yet ended, all its connections together), or the agent has eventsInFlightPerAgentMax (1000), or the node has eventsInFlightMax (50000) or holds eventPayloadsMaxBytes (96 MiB) of their payloads. The event is refused instead of `accepted`; it is the last check (W7). Decision (L13, L23); the app may send it again once earlier events have ended."
    },
    "REPLY_TOO_LARGE": {
      "origin": "decision",
      "receivers": [
        "app",
        "agent"
      ],
      "scope": "event",
      "retry": false,
      "messages": {
        "to_agent": "{why} The event has ended.",
        "to_app": "The agent's reply could not be delivered whole: {why}",
        "text_not_kept": "The streamed text was not kept (over {event_limit} bytes for the event, {agent_limit} for the agent's events together, or {node_limit} for the node's), so an empty content cannot stand for it; send the text as content.",
        "text_too_large": "The reply's text is {bytes} bytes; one reply carries at most {limit}.",
        "frame_too_large": "The reply frame would be {bytes} bytes, over the frame limit of {limit}; shorten metadata.model."
      },
      "cause": "The agent's reply cannot reach the app in one frame, so the event ends with this code for both. Its text (the content, or the streamed fragments joined when content is empty) is over replyContentMaxBytes (976000) bytes as a JSON string, or the whole reply frame would be over frameMaxBytes, or content is empty and the bridge stopped keeping the streamed text (over streamedTextMaxBytes for the event, streamedTextPerAgentMaxBytes for the agent, or streamedTextTotalMaxBytes for the node). Decision (L14, L16); the agent gets it with the event_id in answer to its reply, the app in place of the reply."
    },
    "INVALID_JSON": {
      "origin": "protocol",
      "receivers": [
        "app",
        "agent"
      ],
      "scope": "frame",
      "retry": false,
      "messages": {
        "binary": "Binary frames are not accepted; send JSON text.",
        "not_json": "Message is not valid JSON: {detail}",
        "not_object": "Message must be a JSON object."
      },
      "cause": "The frame is not valid JSON, or not a JSON object, or is a binary frame."
    },
    "INVALID_MESSAGE": {
      "origin": "decision",
      "receivers": [
        "app",
        "agent"
      ],
      "scope": "frame",
      "retry": false,
      "messages": {
        "invalid": "Invalid {type}: {detail}."
      },
      "cause": "Valid JSON but not a message of this endpoint (unknown or missing type, a missing or mistyped field, an unknown field). Decision (W4); the protocol names no code for it. An invalid app `event` is still answered in order and carries a service-generated event_id."
    },
    "RESUME_GAP": {
      "origin": "extension",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": false,
      "messages": {
        "unknown": "Event {event_id} cannot be resumed: the bridge no longer keeps it (its resume window ended, or the bridge or the event's node restarted).",
        "overflow": "Event {event_id} cannot be resumed after fragment {after_seq}: the fragments before {first_kept} were dropped ({why}).",
        "home_gone": "Event {event_id} cannot be resumed: node {node} that holds it does not answer.",
        "cancelled": "Event {event_id} cannot be resumed: it was cancelled."
      },
      "cause": "Resume extension (R6). The rest of the event's stream after `after_seq` can no longer be given whole, so the event ends for the app with this error instead of a partial answer presented as whole; the agent is not told (its event goes on or has ended). The bridge no longer keeps the event (its resumeWindowMs after the event ended is over, or it never existed, or it is another app's, or it was kept by a bridge or node that restarted), or fragments after `after_seq` were dropped to keep the buffers within streamedTextMaxBytes (the event), resumeBufferPerAppMaxBytes (the app) or resumeBufferMaxBytes (the node), or the node that holds the event does not answer, or the event was cancelled (S6)."
    },
    "RESUME_REFUSED": {
      "origin": "extension",
      "receivers": [
        "app"
      ],
      "scope": "frame",
      "retry": false,
      "messages": {
        "not_yours": "This connection cannot resume event {event_id}: the resume token does not match.",
        "not_resumable": "Event {event_id} was not sent on a resumable connection (?resume=1); it cannot be resumed.",
        "ahead": "Event {event_id} has sent {sent} fragments; after_seq {after_seq} is beyond them."
      },
      "cause": "Resume extension (R5). The resume names an event of the app's own that the connection may not take back — the resume token is not the one given to the connection that sent it (another instance of the app), or the event was sent without `?resume=1` — or an `after_seq` beyond the fragments sent. The event goes on for whoever holds it. An event of another app is never named so; its resume gets exactly the RESUME_GAP an unknown event gets (R5)."
    },
    "CANCELLED": {
      "origin": "extension",
      "receivers": [
        "app"
      ],
      "scope": "event",
      "retry": false,
      "messages": {
        "by_app": "Event {event_id} was cancelled by the app."
      },
      "cause": "Cancel extension (S2). The app sent `cancel` for an event in flight of this connection; the event ends at once for it with this error, its last frame, instead of a reply made of the fragments so far. Its bounds are freed at once; the agent is told if its connection opted in (`?cancel=1`), and what it still sends for the event is dropped (S4). The event log's outcome is `cancelled`."
    },
    "CANCEL_REFUSED": {
      "origin": "extension",
      "receivers": [
        "app"
      ],
      "scope": "frame",
      "retry": false,
      "messages": {
        "not_in_flight": "Event {event_id} cannot be cancelled: it is not in flight for this app."
      },
      "cause": "Cancel extension (S3). The `cancel` names an event that is not in flight for this connection — unknown, already ended, held by another connection, or another app's — with the same text for each, so that nothing is learnt of other apps' events. Only the frame is refused; the app's other events go on."
    },
    "TOO_MANY_REQUESTS": {
      "origin": "decision",
      "receivers": [
        "app"
      ],
      "scope": "frame",
      "retry": true,
      "messages": {
        "discover": "Too many discover requests from the apps of organization {org_id}; retry after {seconds} s.",
        "resume": "Too many resumes from the apps of organization {org_id}; retry after {seconds} s. Event {event_id} goes on.",
        "replay": "The apps of organization {org_id} have taken back more than their share of kept streams ({rate} bytes/s); retry after {seconds} s. Event {event_id} goes on."
      },
      "cause": "Decision (F3, R10). The app's organization is over its fair share of `discover` (discoversPerOrgPerSecond) or `resume` frames (resumesPerOrgPerSecond), or of the bytes its resumes have sent again (resumeReplayBytesPerOrgPerSecond). Only that frame is refused; metadata.retry_after_seconds says when the same frame will be taken. A refused `resume` carries its `event_id`, and the event goes on for whoever holds it (it can be resumed later)."
    },
    "INVALID_EVENT_ID": {
      "origin": "protocol",
      "receivers": [
        "agent"
      ],
      "scope": "frame",
      "retry": false,
      "messages": {
        "unknown": "Event {event_id} is unknown or already finished.",
        "invalid": "Invalid {type}: {detail}."
      },
      "cause": "A token, reply or error names an event that is unknown, not this agent's, or already finished (replied, failed or timed out)."
    },
    "MESSAGE_TOO_LARGE": {
      "origin": "protocol",
      "receivers": [
        "agent"
      ],
      "scope": "frame",
      "retry": false,
      "messages": {
        "fragment": "Token fragment is {bytes} bytes; the limit is {limit}. The fragment was dropped."
      },
      "cause": "A token fragment is over tokenFragmentMaxBytes (4096) UTF-8 bytes; the fragment is dropped and the event goes on."
    },
    "UNAUTHORIZED": {
      "origin": "protocol",
      "receivers": [
        "app",
        "agent",
        "http"
      ],
      "scope": "connection",
      "retry": false,
      "messages": {
        "no_token": "No token: send the {kind} token ({prefix}…) as Authorization: Bearer <token>.",
        "no_token_websocket": "No token: send the {kind} token ({prefix}…) as Authorization: Bearer <token> or ?token=<token>.",
        "wrong_token": "The token is wrong, expired or rotated out.",
        "grace_ended": "This token was rotated out and its grace period has ended.",
        "admin_token": "Send the server's ADMIN_TOKEN as Authorization: Bearer <ADMIN_TOKEN>.",
        "admin_token_or_session": "Send the server's ADMIN_TOKEN as Authorization: Bearer <ADMIN_TOKEN>, or sign in at /dashboard.",
        "not_signed_in": "Not signed in, or the session ended: sign in with the ADMIN_TOKEN.",
        "not_the_admin_token": "That is not the ADMIN_TOKEN this bridge was started with.",
        "signed_out_already": "Not signed in, or the session had already ended."
      },
      "close_code": 4401,
      "http_status": 401,
      "cause": "No token, or the token is wrong, expired or rotated out (also when a rotated-out token's grace ends on a live connection)."
    },
    "TOKEN_REVOKED": {
      "origin": "protocol",
      "receivers": [
        "app",
        "agent",
        "http"
      ],
      "scope": "connection",
      "retry": false,
      "messages": {
        "deactivated": "This token's {kind} was deactivated.",
        "live": "This {kind} was {cause}."
      },
      "close_code": 4410,
      "http_status": 401,
      "cause": "The token's app or agent was deactivated (also sent to its live connections when that happens)."
    },
    "FORBIDDEN": {
      "origin": "protocol",
      "receivers": [
        "app",
        "agent",
        "http"
      ],
      "scope": "connection",
      "retry": false,
      "messages": {
        "wrong_endpoint": "This endpoint takes {kind} tokens ({prefix}), not {actual} tokens. Use {path}.",
        "wrong_kind": "{place} takes {kind} tokens ({prefix}), not {actual} tokens.",
        "other_organization": "This app token belongs to another organization.",
        "foreign_page": "A page of {origin} may not change this bridge; use its own dashboard at /dashboard.",
        "no_csrf": "Send the X-CSRF-Token header of your dashboard session with every change (reload the dashboard to get it)."
      },
      "close_code": 4403,
      "http_status": 403,
      "cause": "Wrong endpoint for the client kind (an agent token on /ws/app or an app token on /ws/agent), or an app asking for another organization's directory; on HTTP also a dashboard write without the session's X-CSRF-Token or from another site's page (D3)."
    },
    "CONNECTION_REPLACED": {
      "origin": "decision",
      "receivers": [
        "agent"
      ],
      "scope": "connection",
      "retry": false,
      "messages": {
        "replaced": "Another connection with this agent's token replaced this one."
      },
      "close_code": 4409,
      "cause": "Another connection opened with the same agent's token; the newer connection wins (one connection per agent). Decision; events in flight stay with the agent."
    },
    "DISCONNECTED_BY_ADMIN": {
      "origin": "decision",
      "receivers": [
        "app",
        "agent"
      ],
      "scope": "connection",
      "retry": true,
      "messages": {
        "admin": "An operator closed this connection ({connection_id}) through the bridge's admin API; reconnect to go on."
      },
      "close_code": 4205,
      "cause": "An operator closed this one connection through the admin API (`DELETE /admin/v1/connections/{connection_id}` of openapi.yaml, also the `bridge connections disconnect` command and the dashboard's Disconnect), on whichever node holds it. Decision (H8); the client may reconnect at once with the same token. Events in flight go on as after any close of the connection - an app's resumable events (R1) are kept for its resume (R7) and its other events reach it no more (L15); an agent's events wait agentReconnectGraceMs for it to come back (L6), then end with AGENT_OFFLINE."
    },
    "HEARTBEAT_TIMEOUT": {
      "origin": "decision",
      "receivers": [
        "app",
        "agent"
      ],
      "scope": "connection",
      "retry": true,
      "messages": {
        "silent": "Nothing was received for {seconds} s; send ping every {interval} s.",
        "no_pong": "The WebSocket ping sent {seconds} s ago was not answered; the connection is taken for dead."
      },
      "close_code": 4408,
      "cause": "Nothing was received on the connection for idleCloseMs (three heartbeat periods), or a WebSocket ping the service sent after wsPingAfterMs of silence got no pong (nor any frame) within wsPongTimeoutMs of leaving the service. Decision (L7, L22)."
    },
    "TOO_MANY_CONNECTIONS": {
      "origin": "decision",
      "receivers": [
        "app",
        "agent",
        "http"
      ],
      "scope": "connection",
      "retry": true,
      "messages": {
        "total": "The bridge has {count} connections, its limit; retry later.",
        "address": "Address {address} has {count} connections, the limit per address; close some or retry later.",
        "app": "App {app_id} has {count} connections, the limit per app; close some or retry later.",
        "unauthenticated": "The bridge has {count} connections that have not completed an authenticated handshake, its limit; retry later.",
        "unauthenticated_address": "Address {address} has {count} connections that have not completed an authenticated handshake, the limit per address; retry later."
      },
      "close_code": 4503,
      "http_status": 503,
      "cause": "The handshake would go over a bound on live connections, checked in this order - the bridge's (connectionsMax), the remote address's (connectionsPerAddressMax), the app's (connectionsPerAppMax); the error text names which. Decision (L18); the client may retry with backoff once connections have closed. Over HTTP (503, written on the new TCP connection before its request is read, then the connection is closed) - the bridge already holds unauthenticatedConnectionsMax connections that have not completed an authenticated handshake (HTTP requests and keep-alive connections included), or unauthenticatedConnectionsPerAddressMax from this address. Decision (L21)."
    },
    "SLOW_CONSUMER": {
      "origin": "decision",
      "receivers": [
        "app",
        "agent"
      ],
      "scope": "connection",
      "retry": true,
      "messages": {
        "unread": "More than {bytes} bytes were waiting for this connection to read them; read faster or open fewer streams.",
        "app": "More than {limit} bytes were waiting for the connections of app {app_id} to read them, and this connection held the most ({bytes}); read faster or open fewer streams.",
        "agent": "More than {limit} bytes were waiting for the connections of agent {agent_id} to read them, and this connection held the most ({bytes}); read faster.",
        "total": "More than {limit} bytes were waiting for the bridge's clients to read them, and this connection held the most ({bytes}); read faster or open fewer streams."
      },
      "close_code": 4429,
      "cause": "More than sendBufferMaxBytes were waiting for the client to read them (it reads slower than frames arrive for it), or more than sendBufferPerAppMaxBytes for all the connections of its app together, sendBufferPerAgentMaxBytes for its agent's, or sendBufferTotalMaxBytes for every connection of the node, and this connection held the most of them. The frame that would cross the limit is not sent to the connection closed; this error and the close follow what was already queued. Decision (W17, L19); events in flight go on, their frames for this connection are dropped."
    },
    "INCOMPLETE_MESSAGE": {
      "origin": "decision",
      "receivers": [
        "app",
        "agent"
      ],
      "scope": "connection",
      "retry": true,
      "messages": {
        "timeout": "A message was started {seconds} s ago and has not arrived whole; every message must arrive within {limit} s of its first byte.",
        "app": "The connections of app {app_id} hold {bytes} bytes of messages started and not yet whole, over the limit of {limit}, and this connection held the most of them.",
        "agent": "The connections of agent {agent_id} hold {bytes} bytes of messages started and not yet whole, over the limit of {limit}, and this connection held the most of them.",
        "total": "The bridge holds {bytes} bytes of messages started and not yet whole, over its limit of {limit}, and this connection held the most of them."
      },
      "close_code": 4413,
      "cause": "A WebSocket message the client began sending did not arrive whole within partialMessageTimeoutMs of its first byte, or the bytes of messages begun and not yet whole are over partialMessagesPerAppMaxBytes for the connections of one app, partialMessagesPerAgentMaxBytes for one agent's, or partialMessagesTotalMaxBytes for the node, and this connection held the most of them. Decision (L20); the client may reconnect and send the message again, whole and sooner."
    },
    "INTERNAL_ERROR": {
      "origin": "protocol",
      "receivers": [
        "app",
        "agent",
        "http"
      ],
      "scope": "connection",
      "retry": true,
      "messages": {
        "frame": "The bridge failed to handle a message; reconnect and retry.",
        "request": "The bridge failed to handle this request; it is safe to retry.",
        "database": "The database does not answer.",
        "cluster_link": "This node has lost its link to the other nodes (Redis does not answer); it takes no new traffic until the link is back.",
        "event_log": "The event log has not been written for {seconds} s: the database does not take its commits ({reason}); {rows} rows wait in memory."
      },
      "close_code": 4500,
      "http_status": 500,
      "cause": "A failure on the service side. The client may retry. When only one event is affected it ends that event instead (scope event) and the connection stays open. On several nodes also an agent's handshake on a node whose claim of the agent Redis did not take within 1 s, or a node cut off from Redis (O19), the agent then reconnecting to another node."
    },
    "SHUTTING_DOWN": {
      "origin": "decision",
      "receivers": [
        "app",
        "http"
      ],
      "scope": "event",
      "retry": true,
      "messages": {
        "in_flight": "The bridge is shutting down; reconnect and send the event again.",
        "not_ready": "The bridge is shutting down."
      },
      "http_status": 503,
      "cause": "The service is shutting down; an event in flight ends with this code, then the connection closes with 1001 (going away). Decision; the client may reconnect and retry."
    },
    "INVALID_REQUEST": {
      "origin": "decision",
      "receivers": [
        "http"
      ],
      "scope": "http",
      "retry": false,
      "messages": {
        "body": "Invalid request body: {detail}.",
        "parameter": "{name}: {value} is not a valid value.",
        "page_limit": "limit: must be a whole number from {minimum} to {maximum}.",
        "foreign_apps": "Not apps of organization {org_id}: {app_ids}.",
        "deactivated": "{owner} is deactivated; its tokens cannot be rotated.",
        "app_deactivated": "App {app_id} is deactivated; it cannot send events."
      },
      "http_status": 400,
      "cause": "An HTTP request body or query parameter is missing, mistyped or out of range, or not acceptable in the resource's state (an allowlist naming an app of another organization, rotating a deactivated token, a test event from a deactivated app or from an app of another organization)."
    },
    "REQUEST_TIMEOUT": {
      "origin": "decision",
      "receivers": [
        "http"
      ],
      "scope": "http",
      "retry": true,
      "messages": {
        "incomplete": "The request did not arrive whole in time: its headers within {headers_seconds} s, all of it within {request_seconds} s."
      },
      "http_status": 408,
      "cause": "An HTTP request (a WebSocket upgrade included) whose headers did not all arrive within httpHeadersTimeoutMs, or which did not arrive whole within httpRequestTimeoutMs; the connection is closed after this answer. Decision (L21)."
    },
    "NOT_FOUND": {
      "origin": "decision",
      "receivers": [
        "http"
      ],
      "scope": "http",
      "retry": false,
      "messages": {
        "route": "No route for {method} {path}.",
        "organization": "Organization {org_id} does not exist.",
        "owner": "{owner} does not exist.",
        "test_clock": "The test clock exists only when the bridge runs with BRIDGE_TEST_CLOCK=1.",
        "dashboard_file": "The dashboard has no file {file}.",
        "docs_file": "No documentation file {file}.",
        "docs_not_built": "No documentation file {file}. The documentation was not built: run `npm run docs`.",
        "connection": "No node of this bridge holds connection {connection_id}: it has closed, or never was.",
        "connection_unanswered": "No node that answered holds connection {connection_id}; {nodes} did not answer within 1 s, and close it if they hold it when the request reaches them."
      },
      "http_status": 404,
      "cause": "The organization, app, agent or connection named in an HTTP path does not exist."
    },
    "METHOD_NOT_ALLOWED": {
      "origin": "decision",
      "receivers": [
        "http"
      ],
      "scope": "http",
      "retry": false,
      "messages": {
        "method": "{method} is not supported on {path}; it takes {allow}."
      },
      "http_status": 405,
      "cause": "The HTTP path exists but not with this method; the answer's `Allow` header lists the methods it takes."
    },
    "ADMIN_API_DISABLED": {
      "origin": "decision",
      "receivers": [
        "http"
      ],
      "scope": "http",
      "retry": false,
      "messages": {
        "off": "The admin API is off: start the bridge with ADMIN_TOKEN set."
      },
      "http_status": 404,
      "cause": "The admin API is off because the server has no ADMIN_TOKEN."
    },
    "OVERLOADED": {
      "origin": "decision",
      "receivers": [
        "http"
      ],
      "scope": "http",
      "retry": true,
      "http_status": 503,
      "cause": "GET /readyz only. The bridge could not accept a connection in the last 10 s (over its connection cap below the open-files limit, or an accept error such as EMFILE or ENFILE); the error text gives the count and the reason. Decision (O8); load balancers send new clients elsewhere until it is ready again."
    }
  },
  "x-close-codes": {
    "GOING_AWAY": {
      "code": 1001,
      "cause": "The service is shutting down; events in flight first end with SHUTTING_DOWN. Clients reconnect with backoff."
    },
    "MESSAGE_TOO_BIG": {
      "code": 1009,
      "cause": "A frame was larger than frameMaxBytes. Sent by the WebSocket layer without an error message."
    }
  },
  "x-limits": {
    "payloadMaxBytes": {
      "value": 64000,
      "unit": "bytes",
      "applies_to": "each app `event`",
      "description": "UTF-8 length of the payload's compact JSON serialisation (JSON.stringify, no spaces). Over it, PAYLOAD_TOO_LARGE; exactly 64000 is accepted."
    },
    "tokenFragmentMaxBytes": {
      "value": 4096,
      "unit": "bytes",
      "applies_to": "each agent `token`",
      "description": "UTF-8 length of the `token` string. Over it, MESSAGE_TOO_LARGE and the fragment is dropped. Connectors should send 1 to 5 words (at most 1 KB)."
    },
    "sessionKeyMaxChars": {
      "value": 255,
      "unit": "characters",
      "applies_to": "session keys",
      "description": "Unicode code points of the stored session key."
    },
    "idMaxChars": {
      "value": 64,
      "unit": "characters",
      "applies_to": "agent_id, app_id, org_id",
      "description": "Longest identifier the service generates or accepts."
    },
    "threadIdMaxChars": {
      "value": 121,
      "unit": "characters",
      "applies_to": "thread_id",
      "description": "sessionKeyMaxChars - len(\"svc:\") - 2 * idMaxChars - 2 separators."
    },
    "frameMaxBytes": {
      "value": 1048576,
      "unit": "bytes",
      "applies_to": "each WebSocket frame, both endpoints",
      "description": "Far above payloadMaxBytes so that an oversized payload gets PAYLOAD_TOO_LARGE; a larger frame closes the connection with 1009 (message too big)."
    },
    "sendBufferMaxBytes": {
      "value": 8388608,
      "unit": "bytes",
      "applies_to": "service, each connection",
      "description": "Frames queued for a client that has not read them yet; beyond, the connection closes with SLOW_CONSUMER. At least frameMaxBytes. Configurable per deployment (SEND_BUFFER_MAX_BYTES)."
    },
    "sendBufferPerAppMaxBytes": {
      "value": 33554432,
      "unit": "bytes",
      "applies_to": "each app, all its connections on a node together",
      "description": "Frames queued for the connections of one app and not yet read; over it a connection already closing that holds part of it is destroyed, else the connection holding the most closes with SLOW_CONSUMER (one connection per frame that crosses it). Counted until a connection is gone, its close handshake included. Decision (L19); configurable per deployment (SEND_BUFFER_PER_APP_MAX_BYTES)."
    },
    "sendBufferPerAgentMaxBytes": {
      "value": 16777216,
      "unit": "bytes",
      "applies_to": "each agent, all its connections on a node together (the live one and those still closing)",
      "description": "As sendBufferPerAppMaxBytes, for one agent's connections. Decision (L19); configurable per deployment (SEND_BUFFER_PER_AGENT_MAX_BYTES)."
    },
    "sendBufferTotalMaxBytes": {
      "value": 167772160,
      "unit": "bytes",
      "applies_to": "each node, every connection together",
      "description": "As sendBufferPerAppMaxBytes, for every connection of the node. Decision (L19); configurable per deployment (SEND_BUFFER_TOTAL_MAX_BYTES)."
    },
    "partialMessagesPerAppMaxBytes": {
      "value": 16777216,
      "unit": "bytes",
      "applies_to": "each app, all its connections on a node together",
      "description": "Bytes received of WebSocket messages begun and not yet whole (a frame in part, or the frames so far of a fragmented message), held until the message is whole. Over it a connection already closing that holds part of it is destroyed, else the connection holding the most closes with INCOMPLETE_MESSAGE. Counted as received, plus 1 KiB for each chunk the socket read them in. Decision (L20); configurable per deployment (PARTIAL_MESSAGES_PER_APP_MAX_BYTES)."
    },
    "partialMessagesPerAgentMaxBytes": {
      "value": 4194304,
      "unit": "bytes",
      "applies_to": "each agent, all its connections on a node together (the live one and those still closing)",
      "description": "As partialMessagesPerAppMaxBytes, for one agent's connections. Decision (L20); configurable per deployment (PARTIAL_MESSAGES_PER_AGENT_MAX_BYTES)."
    },
    "partialMessagesTotalMaxBytes": {
      "value": 67108864,
      "unit": "bytes",
      "applies_to": "each node, every WebSocket connection together (refused handshakes still closing included)",
      "description": "As partialMessagesPerAppMaxBytes, for every connection of the node. Decision (L20); configurable per deployment (PARTIAL_MESSAGES_TOTAL_MAX_BYTES)."
    },
    "partialMessageTimeoutMs": {
      "value": 30000,
      "unit": "milliseconds",
      "applies_to": "each WebSocket message a client sends",
      "description": "A message must arrive whole within this long of its first byte; otherwise the connection closes with INCOMPLETE_MESSAGE. Decision (L20); configurable per deployment (PARTIAL_MESSAGE_TIMEOUT_MS)."
    },
    "closeHandshakeTimeoutMs": {
      "value": 5000,
      "unit": "milliseconds",
      "applies_to": "each WebSocket connection the service closes",
      "description": "After the service sends its close frame, the client has this long to answer it; then the socket is destroyed. Decision (L19)."
    },
    "unauthenticatedConnectionsMax": {
      "value": 2000,
      "unit": "connections",
      "applies_to": "each node, on PORT",
      "description": "TCP connections that have not completed an authenticated WebSocket handshake (a handshake under way or refused and still closing, an HTTP request in flight, a keep-alive connection between requests). One more takes the slot of the oldest that has held one for unauthenticatedEvictAfterMs with no request being answered on it (that one is closed); when none has, it is answered 503 TOO_MANY_CONNECTIONS and closed. Decision (L21); configurable per deployment (MAX_UNAUTHENTICATED_CONNECTIONS)."
    },
    "unauthenticatedEvictAfterMs": {
      "value": 1000,
      "unit": "milliseconds",
      "applies_to": "each node, on PORT, when unauthenticatedConnectionsMax are held",
      "description": "How long an unauthenticated connection holds its slot before a new connection may take it, when every slot is held and no request is being answered on it (a half-sent request, a keep-alive connection between requests, a refused handshake closing). Whoever fills the slots must open more than unauthenticatedConnectionsMax per this time to keep others out; a request being answered is never cut short. Decision (L21)."
    },
    "unauthenticatedConnectionsPerAddressMax": {
      "value": 100,
      "unit": "connections",
      "applies_to": "each remote address, on PORT, when TRUST_PROXY is 0",
      "description": "As unauthenticatedConnectionsMax, from one remote IP address (the TCP peer's; behind trusted proxies every connection has a proxy's address, so it does not apply). Decision (L21); configurable per deployment (MAX_UNAUTHENTICATED_CONNECTIONS_PER_ADDRESS, 0 off)."
    },
    "httpHeadersTimeoutMs": {
      "value": 10000,
      "unit": "milliseconds",
      "applies_to": "each HTTP request on PORT, WebSocket upgrades included (the TLS handshake too with TLS_CERT_FILE)",
      "description": "The request's headers must arrive within this long; otherwise REQUEST_TIMEOUT (408) and the connection closes. Checked every second. Decision (L21)."
    },
    "httpRequestTimeoutMs": {
      "value": 30000,
      "unit": "milliseconds",
      "applies_to": "each HTTP request on PORT",
      "description": "The whole request, its body included, must arrive within this long; otherwise REQUEST_TIMEOUT (408) and the connection closes. Decision (L21)."
    },
    "wsPingAfterMs": {
      "value": 20000,
      "unit": "milliseconds",
      "applies_to": "service, both endpoints",
      "description": "The service sends a WebSocket ping (a control frame, answered by every WebSocket client on its own) to a connection on which nothing (no message, no pong) arrived for this long. Decision (L22); configurable per deployment (WS_PING_AFTER_MS, 0 off)."
    },
    "wsPongTimeoutMs": {
      "value": 10000,
      "unit": "milliseconds",
      "applies_to": "service, both endpoints",
      "description": "A connection that answers the service's ping neither with a pong nor with any message within this long of the ping leaving the service is taken for dead and closed with HEARTBEAT_TIMEOUT. Decision (L22); configurable per deployment (WS_PONG_TIMEOUT_MS)."
    },
    "replyContentMaxBytes": {
      "value": 976000,
      "unit": "bytes",
      "applies_to": "each agent `reply` (its text as the app receives it)",
      "description": "The reply's text (the agent's content, or the streamed fragments joined when content is empty) as it sits in the app's frame, the UTF-8 length of its JSON string form without the quotes (escapes count as written). Over it, REPLY_TOO_LARGE to the agent and the app, and the event ends (L16). frameMaxBytes - payloadMaxBytes - replyEnvelopeMaxBytes, so every reply to an app fits one frame, and so the send buffer."
    },
    "replyEnvelopeMaxBytes": {
      "value": 8576,
      "unit": "bytes",
      "applies_to": "each `reply` to an app",
      "description": "Room in the app's reply frame for all but the text and the payload echo (field names, ids, thread_id, metadata with the session key, about 1 KB at their longest, which leaves 7.5 KB for the agent's model name). A reply whose frame would still be over frameMaxBytes gets REPLY_TOO_LARGE."
    },
    "streamedTextMaxBytes": {
      "value": 976000,
      "unit": "bytes",
      "applies_to": "service, each event in flight",
      "description": "UTF-8 bytes of forwarded fragments the service keeps to build the reply when the agent's content is empty (W10). A fragment that would cross it is still forwarded, but the event's kept text is discarded, so an empty-content reply then gets REPLY_TOO_LARGE (L14). At most replyContentMaxBytes. Configurable per deployment (STREAMED_TEXT_MAX_BYTES)."
    },
    "streamedTextPerAgentMaxBytes": {
      "value": 67108864,
      "unit": "bytes",
      "applies_to": "service, each agent (all its events in flight together)",
      "description": "Memory the kept streamed text of one agent's events may hold together (their buffers, which grow by doubling from 4 KiB; fragments wait in batches of 32 or 512 characters before they are written). An event whose text would cross it has its kept text discarded, as with streamedTextMaxBytes (L14). Configurable per deployment (STREAMED_TEXT_MAX_BYTES_PER_AGENT)."
    },
    "streamedTextTotalMaxBytes": {
      "value": 100663296,
      "unit": "bytes",
      "applies_to": "each node (the kept streamed text of every event in flight together)",
      "description": "Memory the kept streamed texts of all the node's events may hold together (96 MiB), counted as for streamedTextPerAgentMaxBytes. An event whose text would cross it has its kept text discarded (reason node_limit), as with the per-agent bound (L14, L23). Configurable per deployment (STREAMED_TEXT_TOTAL_MAX_BYTES)."
    },
    "eventsInFlightPerAppMax": {
      "value": 1000,
      "unit": "events",
      "applies_to": "each app (all instances of one app share it)",
      "description": "Accepted events of the app that have not ended (reply or error). At the limit a new event gets TOO_MANY_EVENTS (L13). Configurable per deployment (MAX_EVENTS_IN_FLIGHT_PER_APP)."
    },
    "eventsInFlightPerAgentMax": {
      "value": 1000,
      "unit": "events",
      "applies_to": "each agent",
      "description": "Accepted events addressed to the agent that have not ended. At the limit a new event gets TOO_MANY_EVENTS (L13). Configurable per deployment (MAX_EVENTS_IN_FLIGHT_PER_AGENT)."
    },
    "eventsInFlightMax": {
      "value": 50000,
      "unit": "events",
      "applies_to": "each node (every app's events in flight on it together)",
      "description": "Accepted events that have not ended, on one node. At the limit a new event gets TOO_MANY_EVENTS (L13, L23), after the app's and the agent's bounds. Configurable per deployment (MAX_EVENTS_IN_FLIGHT)."
    },
    "eventPayloadsMaxBytes": {
      "value": 100663296,
      "unit": "bytes",
      "applies_to": "each node (the payloads of every event in flight on it together)",
      "description": "Bytes of payloads the node holds for its events in flight (each payload is kept to be echoed in the reply, W10), 96 MiB, counted as held (compact JSON; a payload under 1 KiB, kept as a string, at two bytes a character). An event that would cross it gets TOO_MANY_EVENTS (L13, L23). Configurable per deployment (EVENT_PAYLOADS_MAX_BYTES)."
    },
    "connectionsPerAppMax": {
      "value": 1000,
      "unit": "connections",
      "applies_to": "each app (all instances of one app, all its tokens)",
      "description": "Live connections of one app. One more is refused in its handshake with TOO_MANY_CONNECTIONS (L18). Configurable per deployment (MAX_CONNECTIONS_PER_APP)."
    },
    "connectionsPerAddressMax": {
      "value": 1000,
      "unit": "connections",
      "applies_to": "each remote address, both endpoints",
      "description": "Live connections from one remote IP address, apps and agents together. One more is refused in its handshake with TOO_MANY_CONNECTIONS (L18). Behind a reverse proxy every client has the proxy's address unless TRUST_PROXY counts that proxy, which makes the forwarded address count (O12); otherwise raise it or set 0 (off). Configurable per deployment (MAX_CONNECTIONS_PER_ADDRESS)."
    },
    "connectionsMax": {
      "value": 20000,
      "unit": "connections",
      "applies_to": "service, both endpoints together",
      "description": "Live WebSocket connections of the whole bridge. One more is refused in its handshake with TOO_MANY_CONNECTIONS (L18); below the open-files limit the bridge also caps TCP connections (O8). Configurable per deployment (MAX_CONNECTIONS)."
    },
    "sessionsPerAppMax": {
      "value": 10000,
      "unit": "sessions",
      "applies_to": "each app (its sessions with every agent)",
      "description": "Live sessions the service keeps for one app. A new session over it evicts the app's least recently used one (L17); the conversation is not affected (the agent's session key is the same), only the service's record of it. Configurable per deployment (MAX_SESSIONS_PER_APP)."
    },
    "sessionsMax": {
      "value": 100000,
      "unit": "sessions",
      "applies_to": "each node (every app's sessions on it together)",
      "description": "Live sessions one node keeps in memory, every app's together. A new session over it evicts the node's least recently used one (L17, L23), as the per-app bound does. Configurable per deployment (MAX_SESSIONS)."
    },
    "eventLogQueueMaxRows": {
      "value": 100000,
      "unit": "rows",
      "applies_to": "service (the event log and the stored sessions)",
      "description": "Event-log rows and session changes waiting in memory to be written, queued or kept for a retry while the database does not take them. One more drops the oldest row whose outcome is final, counted in bridge_event_log_rows_dropped_total{reason=\"queue_full\"} and logged (O15). Relaying never waits for the database. A row holds 428 bytes typically, 1,216 at its longest (its ids, thread_id and session key are bounded), so the bound holds 41 to 116 MiB. Configurable per deployment (EVENT_LOG_QUEUE_MAX_ROWS)."
    },
    "connectionsPerAgent": {
      "value": 1,
      "unit": "connections",
      "applies_to": "agent token",
      "description": "A second connection replaces the first (CONNECTION_REPLACED). Several instances of one app may each connect."
    },
    "heartbeatIntervalMs": {
      "value": 30000,
      "unit": "milliseconds",
      "applies_to": "clients, both endpoints",
      "description": "Clients send `ping` this often."
    },
    "heartbeatTimeoutMs": {
      "value": 5000,
      "unit": "milliseconds",
      "applies_to": "clients, both endpoints",
      "description": "A client that gets no `pong` within this time treats the connection as dead and reconnects."
    },
    "idleCloseMs": {
      "value": 90000,
      "unit": "milliseconds",
      "applies_to": "service, both endpoints",
      "description": "The service closes a connection on which nothing arrived for three heartbeat periods (HEARTBEAT_TIMEOUT)."
    },
    "reconnectBaseDelayMs": {
      "value": 1000,
      "unit": "milliseconds",
      "applies_to": "clients",
      "description": "First reconnect delay; it doubles after each failed attempt."
    },
    "reconnectMaxDelayMs": {
      "value": 60000,
      "unit": "milliseconds",
      "applies_to": "clients",
      "description": "Cap of the reconnect delay."
    },
    "appReconnectMaxAttempts": {
      "value": 10,
      "unit": "attempts",
      "applies_to": "app clients",
      "description": "Default number of reconnect attempts of an app client."
    },
    "connectorReconnectMaxAttempts": {
      "value": 5,
      "unit": "attempts",
      "applies_to": "agent connector",
      "description": "Default number of reconnect attempts of the agent connector (connection.reconnect.maxRetries)."
    },
    "connectorDrainTimeoutMs": {
      "value": 20000,
      "unit": "milliseconds",
      "applies_to": "agent connector, when it stops (SIGTERM, SIGINT, stop())",
      "description": "How long a stopping connector lets its events in flight finish while it answers new ones at once with AGENT_ERROR; what is still in flight then ends with AGENT_ERROR, and the stop names those events. Below the 30 s an orchestrator such as Kubernetes waits by default before it kills, leaving time to send those errors and close. Decision (C8); --drain-timeout, drainTimeoutMs."
    },
    "agentTimeoutMs": {
      "value": 300000,
      "unit": "milliseconds",
      "applies_to": "each event",
      "description": "Default time from delivery to the agent's reply or error; then AGENT_TIMEOUT. Configurable per deployment."
    },
    "resumeWindowMs": {
      "value": 60000,
      "unit": "milliseconds",
      "applies_to": "each event sent on a resumable connection (?resume=1)",
      "description": "How long after its end (reply or error) an event's stream and final message are kept for a resume; while it is in flight it is kept whatever its connection does. Decision (R7)."
    },
    "resumeBufferPerAppMaxBytes": {
      "value": 16777216,
      "unit": "bytes",
      "applies_to": "each app, on each node",
      "description": "Bytes kept for resumes of one app's events together, counted as held (R7) — each fragment's JSON text as kept (escapes as written) plus resumeFragmentIndexBytes, each buffer's resumeBufferOverheadBytes, each ended event's final message plus resumeEndedEventBytes — so an empty fragment costs its index too. Over it the oldest kept bytes go first, those of ended events before those of events in flight; a resume that needs them gets RESUME_GAP. Decision (R7); configurable per deployment (RESUME_BUFFER_PER_APP_MAX_BYTES)."
    },
    "resumeBufferMaxBytes": {
      "value": 268435456,
      "unit": "bytes",
      "applies_to": "each node",
      "description": "Bytes kept for resumes on a node, every app together, counted as for one app (resumeBufferPerAppMaxBytes); over it the oldest kept bytes go first, as for one app. Decision (R7); configurable per deployment (RESUME_BUFFER_MAX_BYTES)."
    },
    "resumeFragmentIndexBytes": {
      "value": 8,
      "unit": "bytes",
      "applies_to": "each fragment kept for a resume",
      "description": "What the index of one kept fragment holds (where its text ends and what it counts), added to its JSON text when the resume bounds count it. Decision (R7)."
    },
    "resumeBufferOverheadBytes": {
      "value": 240,
      "unit": "bytes",
      "applies_to": "each buffer kept for a resume (a batch of up to 32 fragments, or an ended event's final message)",
      "description": "What one buffer costs the process besides its bytes (the Buffer and its ArrayBuffer, measured on Node 20), counted against the resume bounds with the fragment that opens the batch or with the final message. Decision (R7)."
    },
    "resumeEndedEventBytes": {
      "value": 448,
      "unit": "bytes",
      "applies_to": "each ended event kept for a resume",
      "description": "What the record of an ended event kept for resumes costs (its ids, token hash, lists; measured on Node 20), counted with its final message; once its bytes are dropped to keep a bound the event is forgotten. Decision (R7)."
    },
    "fragmentsPerOrgPerSecond": {
      "value": 20000,
      "unit": "fragments per second",
      "applies_to": "each organization (all its agents' `token` frames together), on each node",
      "description": "Refill of the organization's fragment bucket; an agent whose `token` frame finds it empty is paused (its socket is not read) until the bucket has refilled, never dropped. 0 turns it off. Decision (F3); configurable per deployment (FRAGMENTS_PER_ORG_PER_SECOND)."
    },
    "fragmentsPerOrgBurst": {
      "value": 20000,
      "unit": "fragments",
      "applies_to": "each organization, on each node",
      "description": "Size of the organization's fragment bucket. Decision (F3); configurable per deployment (FRAGMENTS_PER_ORG_BURST)."
    },
    "fragmentPauseMinMs": {
      "value": 10,
      "unit": "milliseconds",
      "applies_to": "an agent paused for its organization's fragment bucket",
      "description": "The shortest pause; the bucket refills meanwhile, so a paused agent then sends a batch (200 fragments at the default rate) rather than one fragment a timer. Decision (F3)."
    },
    "discoversPerOrgPerSecond": {
      "value": 100,
      "unit": "requests per second",
      "applies_to": "each organization (all its apps' `discover` frames together), on each node",
      "description": "Refill of the organization's discover bucket; a `discover` that finds it empty gets TOO_MANY_REQUESTS with retry_after_seconds. 0 turns it off. Decision (F3); configurable per deployment (DISCOVERS_PER_ORG_PER_SECOND)."
    },
    "discoversPerOrgBurst": {
      "value": 1000,
      "unit": "requests",
      "applies_to": "each organization, on each node",
      "description": "Size of the organization's discover bucket (a thousand app instances may reconnect and discover at once). Decision (F3); configurable per deployment (DISCOVERS_PER_ORG_BURST)."
    },
    "resumesPerOrgPerSecond": {
      "value": 1000,
      "unit": "requests per second",
      "applies_to": "each organization (all its apps' `resume` frames together), on the node of the resuming connection",
      "description": "Refill of the organization's resume bucket; a `resume` that finds it empty gets TOO_MANY_REQUESTS with retry_after_seconds and its event goes on. 0 turns it off. Decision (F3, R10); configurable per deployment (RESUMES_PER_ORG_PER_SECOND)."
    },
    "resumesPerOrgBurst": {
      "value": 10000,
      "unit": "requests",
      "applies_to": "each organization, on the node of the resuming connection",
      "description": "Size of the organization's resume bucket (ten apps with eventsInFlightPerAppMax events each may take them all back at once). Decision (F3, R10); configurable per deployment (RESUMES_PER_ORG_BURST)."
    },
    "resumeReplayBytesPerOrgPerSecond": {
      "value": 4194304,
      "unit": "bytes per second",
      "applies_to": "each organization (the frames its apps' resumes send again), on the event's home node",
      "description": "Refill of the organization's replay bucket. A resume's answer (its frames, in UTF-8 bytes) is taken from it whole, even into debt; a resume that finds the bucket in debt gets TOO_MANY_REQUESTS with retry_after_seconds and its event goes on. 0 turns it off. Decision (R10); configurable per deployment (RESUME_REPLAY_BYTES_PER_ORG_PER_SECOND)."
    },
    "resumeReplayBytesPerOrgBurst": {
      "value": 67108864,
      "unit": "bytes",
      "applies_to": "each organization, on the event's home node",
      "description": "Size of the organization's replay bucket (four apps taking back all that resumeBufferPerAppMaxBytes keeps). Decision (R10); configurable per deployment (RESUME_REPLAY_BYTES_PER_ORG_BURST)."
    },
    "agentReconnectGraceMs": {
      "value": 10000,
      "unit": "milliseconds",
      "applies_to": "events in flight when their agent disconnects",
      "description": "How long events in flight wait for their agent to reconnect before they end with AGENT_OFFLINE. Decision; short enough that the app is not left waiting, long enough for a reconnect."
    },
    "nodeHeartbeatMs": {
      "value": 1000,
      "unit": "milliseconds",
      "applies_to": "each node of a bridge of several nodes (REDIS_URL)",
      "description": "How often a node tells the others it is alive (a heartbeat in Redis), and looks for nodes whose heartbeat has expired. Decision (O14)."
    },
    "nodeExpiryMs": {
      "value": 5000,
      "unit": "milliseconds",
      "applies_to": "each node of a bridge of several nodes (REDIS_URL)",
      "description": "A node whose last heartbeat is older than this is gone; its agents count as disconnected from then on (their events wait agentReconnectGraceMs, then end with AGENT_OFFLINE), within nodeExpiryMs + nodeHeartbeatMs of its last heartbeat. A node restarted under its NODE_ID sooner is counted gone when it first speaks with its new incarnation, and takes its id at once only when its predecessor provably ended (O22). Decision (O14)."
    },
    "overviewSampleMs": {
      "value": 5000,
      "unit": "milliseconds",
      "applies_to": "each node's overview ring (GET /admin/v1/overview)",
      "description": "One sample of a node's numbers (gauges, counts, error codes, latency percentiles) is taken this often. Decision (D8)."
    },
    "overviewWindowMs": {
      "value": 3600000,
      "unit": "milliseconds",
      "applies_to": "each node's overview ring (GET /admin/v1/overview)",
      "description": "How far back a node keeps its samples; the ring holds overviewWindowMs / overviewSampleMs of them (720), the oldest dropped first. Decision (D8)."
    },
    "rotationGraceMs": {
      "value": 3600000,
      "unit": "milliseconds",
      "applies_to": "the previous token after a rotation",
      "description": "The previous token keeps working this long after a rotation, then gets UNAUTHORIZED."
    },
    "sessionTtlDefaultDays": {
      "value": 14,
      "unit": "days",
      "applies_to": "sessions",
      "description": "Default session TTL of an agent (ttl_days); example agents use 14 and 30."
    },
    "rateLimitEventsPerSecond": {
      "value": 20,
      "unit": "events per second",
      "applies_to": "each app (all instances of one app share it)",
      "description": "Default refill rate of the per-app token bucket (RATE_LIMIT_EVENTS_PER_SECOND; 0 disables it)."
    },
    "rateLimitBurst": {
      "value": 40,
      "unit": "events",
      "applies_to": "each app",
      "description": "Default size of the per-app token bucket (RATE_LIMIT_BURST)."
    }
  },
  "x-parser-spec-parsed": true,
  "x-parser-api-version": 3,
  "x-parser-spec-stringified": true
};
    const config = {"show":{"sidebar":true},"sidebar":{"showOperations":"byDefault"}};
    const appRoot = document.getElementById('root');
    AsyncApiStandalone.render(
        { schema, config, }, appRoot
    );
  