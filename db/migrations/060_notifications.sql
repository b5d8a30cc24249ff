-- 060_notifications: notifications that reach the operator anywhere
-- (issue 16, item 3).
--
--   session_events ─(AFTER INSERT trigger, same transaction)─> notifications
--                                                               └─< notification_deliveries
--   operators ─< notification_channels (ntfy | webhook, one of each per operator)
--             ─< push_subscriptions   (Web Push: one row per browser)
--   notification_vapid_keys           (one row: this installation's VAPID key pair)
--
-- The outbox: a session event that needs a person or closes a story is
-- turned into a notification by a trigger on session_events, so the
-- notification commits with the event or not at all. The trigger also writes
-- one delivery per channel of each recipient and NOTIFYs
-- 'nomos_notifications'; the notifier (src/notifications/notifier.ts) wakes
-- on it, and its sweep is the backstop for a missed NOTIFY.
--
-- Exactly once per event per channel: a delivery's idempotency key is
-- (notification_id, channel, channel_ref), unique here, so the outbox cannot
-- hold a second copy; a sender claims a delivery with FOR UPDATE SKIP LOCKED
-- (src/notifications/deliveries.ts), so two replicas never send one copy
-- twice. A sender that dies mid-send loses its lease and the delivery is
-- retried: receivers dedupe on the payload's stable `id` (the notification
-- id, the same on every attempt).
--
-- Locks: new tables only, plus a trigger on session_events (CREATE TRIGGER
-- takes a SHARE ROW EXCLUSIVE lock on it for an instant).

SELECT set_config('nomos.actor', 'system:migration-060', true);

-- ─── an operator's channels ─────────────────────────────────────────────────

-- ntfy: url is the topic URL, secret the optional access token (sent as a
-- bearer token). webhook: url receives the JSON POST, secret signs it
-- (X-Nomos-Signature: sha256=<hex HMAC-SHA256 of the body>). Secrets are
-- never copied into the audit trail.
CREATE TABLE notification_channels (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  operator_id uuid NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  kind        text NOT NULL CHECK (kind IN ('ntfy', 'webhook')),
  url         text NOT NULL CHECK (url ~ '^https?://' AND length(url) <= 2000),
  secret      text CHECK (length(secret) <= 500),
  enabled     boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT notification_channels_one_per_kind UNIQUE (operator_id, kind),
  -- An unsigned webhook could be forged by anyone who learns its URL.
  CONSTRAINT notification_channels_webhook_signed CHECK (kind <> 'webhook' OR length(secret) >= 16)
);
SELECT audit.attach('notification_channels', 'id', 'secret');

-- A browser's PushSubscription (endpoint and its keys), per operator. A
-- push service answering 404/410 means the subscription is gone: the
-- notifier deletes the row.
CREATE TABLE push_subscriptions (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  operator_id uuid NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  endpoint    text NOT NULL UNIQUE CHECK (endpoint ~ '^https?://' AND length(endpoint) <= 2000),
  p256dh      text NOT NULL CHECK (length(p256dh) BETWEEN 1 AND 200),
  auth        text NOT NULL CHECK (length(auth) BETWEEN 1 AND 100),
  user_agent  text CHECK (length(user_agent) <= 500),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX push_subscriptions_operator_idx ON push_subscriptions (operator_id);
SELECT audit.attach('push_subscriptions', 'id', 'p256dh', 'auth');

-- This installation's VAPID key pair (base64url, as the web-push package
-- makes them): generated on first start and kept, so browsers subscribed
-- once stay subscribed across restarts. One row: the boolean key can only be
-- true, so two processes starting at once insert one row between them
-- (INSERT ... ON CONFLICT DO NOTHING, then read).
CREATE TABLE notification_vapid_keys (
  id          boolean PRIMARY KEY DEFAULT true CHECK (id),
  public_key  text NOT NULL,
  private_key text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
SELECT audit.attach('notification_vapid_keys', 'id', 'private_key');

-- ─── the outbox ─────────────────────────────────────────────────────────────

-- One notification per session event that tells the operator something.
-- Its id is the webhook payload's `id`.
CREATE TABLE notifications (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  event_id    bigint NOT NULL UNIQUE REFERENCES session_events (id) ON DELETE CASCADE,
  session_id  uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  type        text NOT NULL CHECK (type IN ('approval_requested', 'plan_finished', 'plan_blocked',
                                            'turn_failed', 'continuation_limit', 'window_expired')),
  title       text NOT NULL,
  text        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_session_idx ON notifications (session_id, created_at);
SELECT audit.attach('notifications', 'id');

-- One delivery of one notification to one channel: the delivery log.
--
--   pending --claim--> sending --ok--> delivered
--      ^                  |  \--error, attempts < max_attempts--> pending (next_attempt_at = now() + backoff)
--      |                  \--error, attempts = max_attempts, or gone--> failed
--      \---lease expired (the sender died)---/
--
-- channel_ref is the notification_channels row (ntfy, webhook) or the
-- push_subscriptions row (push) it was addressed to; destination is what the
-- log shows (a URL, or a push service's origin). Rows stay when their
-- channel is removed: the log is history.
CREATE TABLE notification_deliveries (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  notification_id  uuid NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
  operator_id      uuid NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  channel          text NOT NULL CHECK (channel IN ('ntfy', 'webhook', 'push')),
  channel_ref      uuid NOT NULL,
  destination      text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  max_attempts     integer NOT NULL DEFAULT 8 CHECK (max_attempts >= 1),
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_error       text,
  claimed_by       text,
  claim_expires_at timestamptz,
  delivered_at     timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  -- The idempotency key: one delivery per event per channel.
  CONSTRAINT notification_deliveries_idempotency_key UNIQUE (notification_id, channel, channel_ref),
  CONSTRAINT notification_deliveries_delivered_has_time CHECK ((status = 'delivered') = (delivered_at IS NOT NULL)),
  CONSTRAINT notification_deliveries_sending_has_claim CHECK (
    (status = 'sending') = (claimed_by IS NOT NULL AND claim_expires_at IS NOT NULL))
);
-- The notifier's queue and its lease sweep: only live rows are indexed.
CREATE INDEX notification_deliveries_due_idx ON notification_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notification_deliveries_sending_idx ON notification_deliveries (claim_expires_at) WHERE status = 'sending';
-- The settings page's log, newest first.
CREATE INDEX notification_deliveries_operator_idx ON notification_deliveries (operator_id, created_at DESC);
SELECT audit.attach('notification_deliveries', 'id');

-- ─── the mapping: which events notify, and what they say ────────────────────
--
--   event                                          notification
--   approval_requested                          -> approval_requested
--   plan_finished {outcome: verified}           -> plan_finished
--   plan_finished {outcome: blocked}            -> plan_blocked
--   turn_failed {reason: continuation_limit}    -> continuation_limit (the loop guard, continuation/dispatcher.ts)
--   turn_failed (any other)                     -> turn_failed
--   assent_changed {reason: budget}             -> window_expired (the window's token budget was reached)
--   assent_changed {reason: expired}, while the
--     session has results not yet handed on    -> window_expired
--
-- Anything else notifies nobody. Recipients: the session's operator; a
-- session with none (created with the API token) notifies every operator
-- and admin. Each recipient's enabled ntfy/webhook channels and every push
-- subscription get one delivery row.
CREATE FUNCTION notifications_from_session_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  kind    text;
  title   text;
  body    text;
  waiting integer;
  session_title text;
  session_operator uuid;
  notification_id uuid;
  deliveries integer;
  caller_actor text := nullif(current_setting('nomos.actor', true), '');
BEGIN
  IF NEW.type = 'approval_requested' THEN
    kind := 'approval_requested';
  ELSIF NEW.type = 'plan_finished' THEN
    kind := CASE NEW.data ->> 'outcome' WHEN 'verified' THEN 'plan_finished' WHEN 'blocked' THEN 'plan_blocked' END;
  ELSIF NEW.type = 'turn_failed' THEN
    kind := CASE WHEN NEW.data ->> 'reason' = 'continuation_limit' THEN 'continuation_limit' ELSE 'turn_failed' END;
  ELSIF NEW.type = 'assent_changed' AND NEW.data ->> 'reason' = 'budget' THEN
    kind := 'window_expired';
  ELSIF NEW.type = 'assent_changed' AND NEW.data ->> 'reason' = 'expired' THEN
    -- Results waiting: executions of the session whose result no
    -- continuation has carried to the agent yet (the ledger's open rows).
    SELECT count(*) INTO waiting FROM nomos_plan_executions
     WHERE session_id = NEW.session_id AND continued_at IS NULL;
    IF waiting > 0 THEN
      kind := 'window_expired';
    END IF;
  END IF;
  IF kind IS NULL THEN
    RETURN NULL;
  END IF;

  SELECT s.title, s.operator_id INTO session_title, session_operator FROM sessions s WHERE s.id = NEW.session_id;

  title := CASE kind
    WHEN 'approval_requested' THEN 'Approval needed: '
    WHEN 'plan_finished'      THEN 'Plan finished: '
    WHEN 'plan_blocked'       THEN 'Plan blocked: '
    WHEN 'turn_failed'        THEN 'Turn failed: '
    WHEN 'continuation_limit' THEN 'Loop guard reached: '
    WHEN 'window_expired'     THEN CASE WHEN NEW.data ->> 'reason' = 'budget'
                                        THEN 'Token budget reached: ' ELSE 'Autonomy window expired: ' END
  END || session_title;

  body := CASE kind
    WHEN 'approval_requested' THEN
      CASE WHEN NEW.data #>> '{approval,kind}' = 'plan'
           THEN 'Approve the plan: ' || coalesce(NEW.data #>> '{approval,goal}', NEW.data #>> '{approval,plan,goal}', 'a plan')
           ELSE 'Approve ' || coalesce(NEW.data #>> '{approval,command}', 'a step')
                || ' on ' || coalesce(NEW.data #>> '{approval,target}', 'a target')
                || CASE WHEN NEW.data #>> '{approval,risk}' = 'destructive'
                        THEN ' (destructive: type its confirmation phrase)' ELSE '' END
      END
    WHEN 'plan_finished' THEN coalesce(NEW.data ->> 'summary', 'The goal is verified.')
    WHEN 'plan_blocked' THEN coalesce(NEW.data ->> 'summary', 'The plan is blocked.')
                          || coalesce(' Needs: ' || (NEW.data ->> 'needs'), '')
    WHEN 'turn_failed' THEN coalesce(NEW.data ->> 'message', 'The agent could not go on.')
    WHEN 'continuation_limit' THEN coalesce(NEW.data ->> 'message', 'The loop guard stopped the agent.')
    WHEN 'window_expired' THEN
      CASE WHEN NEW.data ->> 'reason' = 'budget'
           THEN 'The window''s token budget was reached, so the window closed. Approve again to let the agent go on.'
           ELSE 'The assent window expired with ' || waiting || ' result(s) waiting for your next message.'
      END
  END;

  -- The audit trail names who caused the notification: the event's own
  -- actor, or (an event appended outside withActor, e.g. by a turn's event
  -- writer) 'system:notifications', for these two inserts only.
  IF caller_actor IS NULL THEN
    PERFORM set_config('nomos.actor', 'system:notifications', true);
  END IF;

  INSERT INTO notifications (event_id, session_id, type, title, text)
  VALUES (NEW.id, NEW.session_id, kind, left(title, 300), left(body, 2000))
  RETURNING id INTO notification_id;

  WITH recipients AS (
    SELECT o.id FROM operators o
     WHERE o.id = session_operator
        OR (session_operator IS NULL AND o.role IN ('operator', 'admin'))
  ), targets AS (
    SELECT c.operator_id, c.kind AS channel, c.id AS channel_ref, c.url AS destination
      FROM notification_channels c JOIN recipients r ON r.id = c.operator_id
     WHERE c.enabled
    UNION ALL
    SELECT p.operator_id, 'push', p.id, substring(p.endpoint FROM '^https?://[^/]+')
      FROM push_subscriptions p JOIN recipients r ON r.id = p.operator_id
  )
  INSERT INTO notification_deliveries (notification_id, operator_id, channel, channel_ref, destination)
  SELECT notification_id, t.operator_id, t.channel, t.channel_ref, t.destination FROM targets t
  ON CONFLICT ON CONSTRAINT notification_deliveries_idempotency_key DO NOTHING;
  GET DIAGNOSTICS deliveries = ROW_COUNT;

  IF caller_actor IS NULL THEN
    PERFORM set_config('nomos.actor', '', true);
  END IF;

  -- Delivered on commit, never for a rolled-back event; folded with other
  -- identical NOTIFYs of the transaction, which is fine: the notifier claims
  -- whatever is due, not the id it was told.
  IF deliveries > 0 THEN
    PERFORM pg_notify('nomos_notifications', '');
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER session_events_notify_operator
  AFTER INSERT ON session_events
  FOR EACH ROW
  WHEN (NEW.type IN ('approval_requested', 'plan_finished', 'turn_failed', 'assent_changed'))
  EXECUTE FUNCTION notifications_from_session_event();

-- ─── grants ─────────────────────────────────────────────────────────────────
-- 030's default privileges already cover tables this owner creates; granted
-- explicitly as well, for databases whose owner changed since.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'nomos_service') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON notification_channels, push_subscriptions, notification_vapid_keys,
      notifications, notification_deliveries TO nomos_service;
  END IF;
END;
$$;
