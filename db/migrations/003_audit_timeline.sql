-- 003_audit_timeline: audit.events read as a story, one line per event.
--
--   SELECT at, actor, what FROM audit.timeline WHERE session_id = '...';
--
-- The view only reads audit.events; it adds no state. Lines are written for
-- the tables whose changes an operator asks about (executions, approvals,
-- plans, assent windows, turns, targets); any other change falls back to
-- "<operation> <table> <key> (<changed columns>)".

CREATE VIEW audit.timeline AS
SELECT
  e.id,
  e.at,
  e.session_id,
  e.actor,
  e.table_name,
  e.operation,
  e.row_key,
  CASE
    WHEN e.table_name = 'executions' AND e.operation = 'INSERT' THEN
      format('execution %s on %s queued as %s (%s): %s',
             left(e.row_key, 8), e.new_row ->> 'target', e.new_row ->> 'status',
             e.new_row ->> 'risk', left(e.new_row ->> 'command', 120))
    WHEN e.table_name = 'executions' AND 'status' = ANY (e.changed_columns) THEN
      format('execution %s on %s: %s -> %s%s',
             left(e.row_key, 8), e.new_row ->> 'target',
             e.old_row ->> 'status', e.new_row ->> 'status',
             CASE WHEN e.new_row ->> 'exit_code' IS NOT NULL
                  THEN format(' (exit %s)', e.new_row ->> 'exit_code') ELSE '' END
             || CASE WHEN e.new_row ->> 'error' IS NOT NULL
                  THEN format(': %s', left(e.new_row ->> 'error', 120)) ELSE '' END)
    WHEN e.table_name = 'approvals' AND e.operation = 'INSERT' THEN
      format('approval %s requested for %s %s',
             left(e.row_key, 8), e.new_row ->> 'kind',
             left(coalesce(e.new_row ->> 'plan_id', e.new_row ->> 'execution_id'), 8))
    WHEN e.table_name = 'approvals' AND 'status' = ANY (e.changed_columns) THEN
      format('approval %s %s by %s via %s',
             left(e.row_key, 8), e.new_row ->> 'status',
             coalesce(e.new_row ->> 'decided_by', e.actor), coalesce(e.new_row ->> 'decided_via', '?'))
    WHEN e.table_name = 'plans' AND e.operation = 'INSERT' THEN
      format('plan %s proposed: %s (%s steps)',
             left(e.row_key, 8), left(e.new_row ->> 'goal', 120),
             jsonb_array_length(e.new_row -> 'steps'))
    WHEN e.table_name = 'plans' AND 'status' = ANY (e.changed_columns) THEN
      format('plan %s: %s -> %s', left(e.row_key, 8), e.old_row ->> 'status', e.new_row ->> 'status')
    WHEN e.table_name = 'assent_windows' AND e.operation = 'INSERT' THEN
      format('assent window opened until %s, scope %s',
             e.new_row ->> 'expires_at', e.new_row ->> 'scope_targets')
    WHEN e.table_name = 'assent_windows' AND 'closed_at' = ANY (e.changed_columns) THEN
      format('assent window closed (%s)', e.new_row ->> 'close_reason')
    WHEN e.table_name = 'assent_windows' AND 'expires_at' = ANY (e.changed_columns) THEN
      format('assent window extended until %s', e.new_row ->> 'expires_at')
    WHEN e.table_name = 'turns' AND e.operation = 'INSERT' THEN
      format('%s turn %s queued', e.new_row ->> 'kind', left(e.row_key, 8))
    WHEN e.table_name = 'turns' AND 'status' = ANY (e.changed_columns) THEN
      format('%s turn %s: %s -> %s%s', e.new_row ->> 'kind', left(e.row_key, 8),
             e.old_row ->> 'status', e.new_row ->> 'status',
             CASE WHEN e.new_row ->> 'error' IS NOT NULL
                  THEN format(': %s', left(e.new_row ->> 'error', 120)) ELSE '' END)
    WHEN e.table_name = 'messages' AND e.operation = 'INSERT' THEN
      format('%s message %s', e.new_row ->> 'kind', e.row_key)
    WHEN e.table_name = 'nomos_plan_executions' AND 'continued_at' = ANY (e.changed_columns) THEN
      format('execution %s claimed for continuation by %s',
             left(e.row_key, 8), e.new_row ->> 'claimed_by')
    WHEN e.table_name = 'targets' AND e.operation = 'INSERT' THEN
      format('target %s registered (%s)', e.row_key, e.new_row ->> 'kind')
    ELSE
      format('%s %s %s%s', lower(e.operation), e.table_name, left(e.row_key, 36),
             CASE WHEN e.changed_columns IS NOT NULL
                  THEN format(' (%s)', array_to_string(e.changed_columns, ', ')) ELSE '' END)
  END AS what
FROM audit.events e
ORDER BY e.id;

COMMENT ON VIEW audit.timeline IS
  'audit.events as a story: SELECT at, actor, what FROM audit.timeline WHERE session_id = ... ORDER BY id';
