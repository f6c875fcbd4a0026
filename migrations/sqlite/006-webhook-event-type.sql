-- The type of each webhook event (WEBHOOK_EVENTS: plant.created, plant.updated, plant.deleted), sent as the
-- delivery's webhook-event-type header. Every row written before is a plant.created event.
ALTER TABLE webhook_outbox ADD COLUMN event_type TEXT NOT NULL DEFAULT 'plant.created';
