-- The W3C trace of the create that wrote the event, as `<32 hex trace id>-<2 hex flags>`, so each delivery sends
-- a traceparent in the same trace; NULL when the create came without a valid traceparent (then none is sent).
ALTER TABLE webhook_outbox ADD COLUMN trace_context TEXT;
