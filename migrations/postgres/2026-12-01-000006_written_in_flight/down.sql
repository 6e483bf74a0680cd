DROP FUNCTION lockd_written_in_flight(xid);
