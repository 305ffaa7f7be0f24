-- A replay (POST /v1/webhooks/:id/replay) also brings back the deliveries of the subscription that
-- failed or were cancelled within its window, whatever their event's time: the docs tell a client
-- to replay from failingSince or disabledAt, which come after the events whose deliveries began
-- the failures or were cancelled by the disable (found by an audit). Finished deliveries that
-- missed are few next to delivered ones, so a partial index finds them by their end.
CREATE INDEX webhook_deliveries_missed ON webhook_deliveries (client_id, subscription_id, completed_at)
  WHERE status IN ('FAILED', 'CANCELLED');
