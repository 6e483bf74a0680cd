-- History batches packed (issue #15, W1 with history >= 0.9x W1 without): the writer stores a
-- batch's records as an LZ4 block of their JSON array (a blob; see the store's
-- `history/packed.rs`), read back by `lockd_records`, a function of every connection of the
-- store. A W1 commit's 1.7 kB of records take about a quarter of that, so the batches allocate a
-- page (and rewrite the database header, which counts the pages) every few commits instead of
-- every other one. The batches written so far stay JSON text and are read as they are: the
-- schema does not change, and this migration marks where the format did (its down.sql unpacks
-- them for the code before it).
SELECT 1;
