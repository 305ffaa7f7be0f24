-- A repeat of a card message already answered (0101, 0201, 0121, 0221, 0401, 0421 after the first
-- sending, same STAN, RRN and content within 24 hours) is recorded as a child of its own, under
-- the same lifecycle and with the first answer (contract §12.4: "0101/0201 produce a new child
-- with the same parent and the same decision"): one record per message. It moves no money and
-- asks nobody, and it names the record it repeats, so that what counts decisions (the card's
-- approvals of the day) counts the first one only. NULL for every other record.

ALTER TABLE card_transactions ADD COLUMN repeat_of uuid;
ALTER TABLE card_transactions ADD CONSTRAINT card_transactions_repeat_of
  FOREIGN KEY (client_id, repeat_of) REFERENCES card_transactions (client_id, id);
