DROP TABLE session_holds;
DROP TABLE sessions;
