// Kysely's view of the tables in db/migrations. Invariant: this file matches
// the migrations column for column; tests/db-schema.test.ts compares it with
// information_schema so drift fails a test instead of a query at run time.
// Generated<T> marks columns the database fills (defaults, identities).
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/**
 * jsonb: written as the plain value (postgres.js serializes objects and
 * arrays itself; a JSON.stringify'd string would be stored as a JSON string),
 * read back parsed.
 */
type Json<T> = ColumnType<T, T, T>;
type GeneratedJson<T> = ColumnType<T, T | undefined, T>;
/** bigint identity: postgres.js returns int8 as a string to keep precision. */
type BigIntId = ColumnType<string, never, never>;
type Int8 = ColumnType<string, number | string | bigint | undefined, number | string | bigint>;

export type TargetKind = "proxmox" | "ssh" | "container";
export type MessageKind = "operator" | "assistant" | "tool_results" | "system_note";
export type TurnKind = "operator" | "continuation";
export type TurnStatus = "queued" | "running" | "completed" | "failed" | "aborted" | "interrupted" | "cancelled";
export type PlanStatus = "pending_approval" | "approved" | "rejected" | "expired" | "superseded";
export type ExecutionMode = "sync" | "async";
export type Risk = "read_only" | "config_mutation" | "destructive";
export type ExecutionStatus = "pending_approval" | "approved" | "running" | "completed" | "failed" | "timed_out" | "cancelled" | "rejected";
export type ApprovalKind = "plan" | "execution";
export type ApprovalStatus = "pending" | "approved" | "rejected" | "expired";
export type DecidedVia = "button" | "chat" | "expiry";
export type WindowCloseReason = "expired" | "revoked" | "continuation_limit" | "rejected" | "plan_verified" | "plan_blocked" | "budget";
export type PlanOutcome = "verified" | "blocked";
/** 070: a plan step's progress (src/plans/plan-steps.ts). */
export type PlanStepStatus = "pending" | "running" | "done" | "failed" | "skipped";
/** 030: viewer < operator < admin (src/auth/roles.ts). */
export type OperatorRole = "viewer" | "operator" | "admin";

export const TERMINAL_EXECUTION_STATUSES: readonly ExecutionStatus[] = ["completed", "failed", "timed_out", "cancelled", "rejected"];

export interface OperatorsTable {
  id: Generated<string>;
  username: string;
  password_hash: string;
  created_at: GeneratedTimestamp;
  role: ColumnType<OperatorRole, OperatorRole | undefined, OperatorRole>;
}

export interface OperatorLoginsTable {
  token_sha256: string;
  operator_id: string;
  created_at: GeneratedTimestamp;
  expires_at: Timestamp;
}

export interface TargetsTable {
  name: string;
  kind: TargetKind;
  host: string | null;
  port: number | null;
  username: string | null;
  private_key_path: string | null;
  host_key_sha256: string | null;
  node: string | null;
  vmid: number | null;
  created_by_session_id: string | null;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface SessionsTable {
  id: Generated<string>;
  title: Generated<string>;
  operator_id: string | null;
  created_at: GeneratedTimestamp;
  /** Set by the page's "Delete" (090): hidden from every reader, kept for the audit trail. */
  archived_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface TurnsTable {
  id: Generated<string>;
  session_id: string;
  kind: TurnKind;
  status: Generated<TurnStatus>;
  input: GeneratedJson<unknown>;
  iterations: Generated<number>;
  error: string | null;
  owner: string | null;
  lease_expires_at: Timestamp | null;
  created_at: GeneratedTimestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

export interface MessagesTable {
  id: BigIntId;
  session_id: string;
  turn_id: string | null;
  kind: MessageKind;
  content: Json<unknown[]>;
  created_at: GeneratedTimestamp;
}

export interface PlansTable {
  id: Generated<string>;
  session_id: string;
  goal: string;
  steps: Json<unknown[]>;
  status: Generated<PlanStatus>;
  created_at: GeneratedTimestamp;
  decided_at: Timestamp | null;
  /** 050: how the plan ended (report_outcome); null while it is not finished. */
  outcome: PlanOutcome | null;
  outcome_summary: string | null;
  outcome_needs: string | null;
  finished_at: Timestamp | null;
}

/** 080: a guest snapshot Nomos took before a plan's first change (src/snapshots). */
export type GuestSnapshotState = "taken" | "failed" | "unsupported" | "rolled_back" | "removed";
export type GuestKind = "lxc" | "qemu";

export interface GuestSnapshotsTable {
  id: Generated<string>;
  session_id: string;
  plan_id: string;
  target: string;
  node: string;
  vmid: number;
  kind: GuestKind;
  name: string;
  state: GuestSnapshotState;
  reason: string | null;
  guest_was_running: boolean | null;
  size_bytes: ColumnType<string | null, number | string | null | undefined, number | string | null>;
  execution_id: string | null;
  rollback_execution_id: string | null;
  waiver_execution_id: string | null;
  taken_at: GeneratedTimestamp;
  rolled_back_at: Timestamp | null;
  removed_at: Timestamp | null;
}

export interface ExecutionsTable {
  id: Generated<string>;
  session_id: string | null;
  plan_id: string | null;
  turn_id: string | null;
  target: string;
  command: string;
  description: string | null;
  mode: Generated<ExecutionMode>;
  risk: Risk;
  /** The rule that decided `risk`, in words (issue 12); null before migration 040. */
  risk_reason: string | null;
  /** 070: the plan step it served (run / request_execution `step`), 1-based. */
  plan_step: ColumnType<number | null, number | null | undefined, number | null>;
  status: Generated<ExecutionStatus>;
  timeout_s: Generated<number>;
  exit_code: number | null;
  signal: string | null;
  stdout: Generated<string>;
  stderr: Generated<string>;
  stdout_dropped_bytes: Int8;
  stderr_dropped_bytes: Int8;
  error: string | null;
  runner_owner: string | null;
  lease_expires_at: Timestamp | null;
  cancel_requested_at: Timestamp | null;
  created_at: GeneratedTimestamp;
  approved_at: Timestamp | null;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

export interface ApprovalsTable {
  id: Generated<string>;
  session_id: string;
  kind: ApprovalKind;
  plan_id: string | null;
  execution_id: string | null;
  status: Generated<ApprovalStatus>;
  confirmation_phrase: string | null;
  decided_by: string | null;
  decided_via: DecidedVia | null;
  created_at: GeneratedTimestamp;
  expires_at: Timestamp;
  decided_at: Timestamp | null;
}

export interface AssentWindowsTable {
  id: Generated<string>;
  session_id: string;
  plan_id: string | null;
  scope_targets: ColumnType<string[], string[] | undefined, string[]>;
  preauthorized: GeneratedJson<unknown[]>;
  opened_by: string;
  opened_at: GeneratedTimestamp;
  expires_at: Timestamp;
  continuations: Generated<number>;
  closed_at: Timestamp | null;
  close_reason: WindowCloseReason | null;
}

export interface PlanExecutionsTable {
  execution_id: string;
  session_id: string;
  plan_id: string | null;
  continued_at: Timestamp | null;
  claimed_by: string | null;
  claim_expires_at: Timestamp | null;
  delivered_turn_id: string | null;
  created_at: GeneratedTimestamp;
}

export interface SessionEventsTable {
  id: BigIntId;
  session_id: string;
  turn_id: string | null;
  type: string;
  data: GeneratedJson<unknown>;
  created_at: GeneratedTimestamp;
}

export interface AuditEventsTable {
  id: BigIntId;
  at: GeneratedTimestamp;
  txid: Int8;
  actor: string;
  table_name: string;
  operation: "INSERT" | "UPDATE" | "DELETE";
  row_key: string;
  session_id: string | null;
  old_row: Json<Record<string, unknown>> | null;
  new_row: Json<Record<string, unknown>> | null;
  changed_columns: string[] | null;
}

export interface AuditTimelineView {
  id: BigIntId;
  at: Date;
  session_id: string | null;
  actor: string;
  table_name: string;
  operation: string;
  row_key: string;
  what: string;
}

/** 010: SSH connections refused for a host key other than the pinned one. */
export interface SshHostKeyRefusalsTable {
  id: BigIntId;
  target: string;
  host: string;
  port: number;
  expected_sha256: string;
  presented_sha256: string;
  at: GeneratedTimestamp;
}

/** 070: one row per plan step, its live status (src/plans/plan-steps.ts). */
export interface PlanStepsTable {
  id: BigIntId;
  plan_id: string;
  session_id: string;
  position: number;
  status: Generated<PlanStepStatus>;
  note: string | null;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  updated_at: GeneratedTimestamp;
}

/** 070: one row per model call with the usage the API reported (src/usage/model-calls.ts). */
export interface ModelCallsTable {
  id: BigIntId;
  session_id: string;
  turn_id: string | null;
  plan_id: string | null;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: Generated<number>;
  cache_write_tokens: Generated<number>;
  cost_usd: number | null;
  created_at: GeneratedTimestamp;
}

/** 030: failed logins and bearer tokens per key (src/auth/throttle.ts); not audited. */
export interface AuthThrottlesTable {
  key: string;
  failures: number;
  last_failure_at: Timestamp;
  blocked_until: Timestamp | null;
}

/** 060: notifications (src/notifications/). */
export type NotificationType =
  | "approval_requested"
  | "plan_finished"
  | "plan_blocked"
  | "turn_failed"
  | "continuation_limit"
  | "window_expired";
export type NotificationChannelKind = "ntfy" | "webhook";
export type DeliveryChannel = NotificationChannelKind | "push";
export type DeliveryStatus = "pending" | "sending" | "delivered" | "failed";

export interface NotificationChannelsTable {
  id: Generated<string>;
  operator_id: string;
  kind: NotificationChannelKind;
  url: string;
  secret: string | null;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface PushSubscriptionsTable {
  id: Generated<string>;
  operator_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  user_agent: string | null;
  created_at: GeneratedTimestamp;
}

export interface NotificationVapidKeysTable {
  id: ColumnType<boolean, boolean | undefined, never>;
  public_key: string;
  private_key: string;
  created_at: GeneratedTimestamp;
}

export interface NotificationsTable {
  id: Generated<string>;
  event_id: Int8;
  session_id: string;
  type: NotificationType;
  title: string;
  text: string;
  created_at: GeneratedTimestamp;
}

export interface NotificationDeliveriesTable {
  id: Generated<string>;
  notification_id: string;
  operator_id: string;
  channel: DeliveryChannel;
  channel_ref: string;
  destination: string;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  max_attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: GeneratedTimestamp;
  last_error: string | null;
  claimed_by: string | null;
  claim_expires_at: Timestamp | null;
  delivered_at: Timestamp | null;
  created_at: GeneratedTimestamp;
}

export interface Database {
  operators: OperatorsTable;
  operator_logins: OperatorLoginsTable;
  targets: TargetsTable;
  sessions: SessionsTable;
  turns: TurnsTable;
  messages: MessagesTable;
  plans: PlansTable;
  guest_snapshots: GuestSnapshotsTable;
  executions: ExecutionsTable;
  approvals: ApprovalsTable;
  assent_windows: AssentWindowsTable;
  nomos_plan_executions: PlanExecutionsTable;
  session_events: SessionEventsTable;
  ssh_host_key_refusals: SshHostKeyRefusalsTable;
  auth_throttles: AuthThrottlesTable;
  notification_channels: NotificationChannelsTable;
  push_subscriptions: PushSubscriptionsTable;
  notification_vapid_keys: NotificationVapidKeysTable;
  notifications: NotificationsTable;
  notification_deliveries: NotificationDeliveriesTable;
  plan_steps: PlanStepsTable;
  model_calls: ModelCallsTable;
  "audit.events": AuditEventsTable;
  "audit.timeline": AuditTimelineView;
}

export type Execution = Selectable<ExecutionsTable>;
export type NewExecution = Insertable<ExecutionsTable>;
export type ExecutionUpdate = Updateable<ExecutionsTable>;
export type Session = Selectable<SessionsTable>;
export type Turn = Selectable<TurnsTable>;
export type Message = Selectable<MessagesTable>;
export type Plan = Selectable<PlansTable>;
export type Approval = Selectable<ApprovalsTable>;
export type AssentWindow = Selectable<AssentWindowsTable>;
export type Target = Selectable<TargetsTable>;
export type PlanExecution = Selectable<PlanExecutionsTable>;
export type SessionEvent = Selectable<SessionEventsTable>;
export type GuestSnapshot = Selectable<GuestSnapshotsTable>;
