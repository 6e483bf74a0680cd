DROP FUNCTION lockd_enter_timeline();
DROP FUNCTION lockd_current_timeline();
DROP TABLE lockd_timeline;
