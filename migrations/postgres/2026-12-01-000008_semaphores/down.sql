DROP TABLE semaphore_holders;
