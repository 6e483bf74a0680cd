DROP TABLE shared_holders;
