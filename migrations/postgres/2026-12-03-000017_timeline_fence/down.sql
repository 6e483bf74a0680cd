DROP FUNCTION lockd_enter_timeline(BIGINT, BIGINT);
DROP FUNCTION lockd_current_timeline();
DROP TABLE lockd_timeline;
