DROP TABLE expired_holds;
