//! The election operations of the client: campaign, renew, proclaim, resign, and the leader.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::client::{read_text, retry_after, segment, unexpected};
use crate::{ClientError, LockClient, Released};

/// The leader of an election, as the server describes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Leader {
    pub election: String,
    pub candidate: String,
    /// The leader's fencing token: larger than every earlier leader's. Pass it downstream.
    pub term: i64,
    pub elected_at: String,
    pub expires_at: String,
    /// What the leader proclaims, when it set a value.
    #[serde(default)]
    pub value: Option<Value>,
}

/// The answer to a campaign.
#[derive(Debug, Clone, PartialEq)]
pub enum Campaigned {
    /// The candidate leads.
    Elected(Leader),
    /// Another candidate leads (`leader`, or `None` when the office fell vacant just after);
    /// `retry_after_seconds` is the server's `Retry-After` hint after a wait, when it gave one.
    NotElected {
        leader: Option<Leader>,
        retry_after_seconds: Option<u64>,
    },
}

/// The answer to an operation only the leader may make (renew, proclaim).
#[derive(Debug, Clone, PartialEq)]
pub enum Leading {
    /// The caller leads: the leader as it is now.
    Leader(Leader),
    /// Another candidate leads (403).
    NotLeader,
    /// No one leads (404).
    Vacant,
}

#[derive(Deserialize)]
struct CampaignBody {
    elected: bool,
    leader: Option<Leader>,
}

pub(crate) fn election_path(name: &str) -> String {
    format!("/elections/{}", segment(name))
}

impl LockClient {
    /// Campaigns for `election` as `candidate` for `ttl_seconds`, with `value` when given, asking
    /// the server to hold the request up to `wait_seconds` (sent only when not 0).
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer.
    pub fn campaign(
        &self,
        election: &str,
        candidate: &str,
        ttl_seconds: u32,
        wait_seconds: u64,
        value: Option<&Value>,
    ) -> Result<Campaigned, ClientError> {
        let mut body = json!({"candidate": candidate, "ttl_seconds": ttl_seconds});
        if wait_seconds > 0 {
            body["wait_seconds"] = json!(wait_seconds);
        }
        if let Some(value) = value {
            body["value"] = value.clone();
        }
        self.campaign_sending(election, &body, wait_seconds)
    }

    /// Sends the campaign `body` of `election`, which may wait `wait_seconds`, and reads its
    /// answer.
    pub(crate) fn campaign_sending(
        &self,
        election: &str,
        body: &Value,
        wait_seconds: u64,
    ) -> Result<Campaigned, ClientError> {
        let timeout = self.request_timeout() + Duration::from_secs(wait_seconds);
        let path = format!("{}/campaign", election_path(election));
        let response = self.send("POST", &path, Some(body), timeout)?;
        let status = response.status();
        let retry_after_seconds = retry_after(&response);
        let text = read_text(response)?;
        if status != 200 {
            return Err(unexpected(status, text));
        }
        match serde_json::from_str::<CampaignBody>(&text) {
            Ok(CampaignBody {
                elected: true,
                leader: Some(leader),
            }) => Ok(Campaigned::Elected(leader)),
            Ok(CampaignBody {
                elected: false,
                leader,
            }) => Ok(Campaigned::NotElected {
                leader,
                retry_after_seconds,
            }),
            _ => Err(unexpected(status, text)),
        }
    }

    /// The leader `candidate` renews its lease for `ttl_seconds` from the server's now, giving up
    /// after `timeout`.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer within `timeout` or an error answer other than
    /// 403 and 404.
    pub fn renew_leadership_within(
        &self,
        election: &str,
        candidate: &str,
        ttl_seconds: u32,
        timeout: Duration,
    ) -> Result<Leading, ClientError> {
        let body = json!({"candidate": candidate, "ttl_seconds": ttl_seconds});
        let path = format!("{}/renew", election_path(election));
        leading(self.exchange("POST", &path, Some(&body), timeout))
    }

    /// The leader `candidate` proclaims `value`, keeping its term and lease.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer other than 403 and 404.
    pub fn proclaim(
        &self,
        election: &str,
        candidate: &str,
        value: &Value,
    ) -> Result<Leading, ClientError> {
        let body = json!({"candidate": candidate, "value": value});
        let path = format!("{}/proclaim", election_path(election));
        leading(self.exchange("POST", &path, Some(&body), self.request_timeout()))
    }

    /// The leader `candidate` resigns, giving up after `timeout`: `Released`, `Forbidden` (another
    /// leads) or `NotFound` (no one leads).
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer within `timeout` or an unexpected error answer.
    pub fn resign_within(
        &self,
        election: &str,
        candidate: &str,
        timeout: Duration,
    ) -> Result<Released, ClientError> {
        let body = json!({"candidate": candidate});
        let path = format!("{}/leader", election_path(election));
        match self.exchange("DELETE", &path, Some(&body), timeout) {
            Ok((204, _)) => Ok(Released::Released),
            Err(ClientError::Problem(problem)) if problem.status == 403 => Ok(Released::Forbidden),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(Released::NotFound),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }

    /// The leader of `election`, or `None` when the office is vacant.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer other than 404.
    pub fn leader(&self, election: &str) -> Result<Option<Leader>, ClientError> {
        match self.exchange(
            "GET",
            &election_path(election),
            None,
            self.request_timeout(),
        ) {
            Ok((200, text)) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|_| unexpected(200, text)),
            Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(None),
            Ok((status, text)) => Err(unexpected(status, text)),
            Err(error) => Err(error),
        }
    }
}

fn leading(answer: Result<(u16, String), ClientError>) -> Result<Leading, ClientError> {
    match answer {
        Ok((200, text)) => serde_json::from_str(&text)
            .map(Leading::Leader)
            .map_err(|_| unexpected(200, text)),
        Err(ClientError::Problem(problem)) if problem.status == 403 => Ok(Leading::NotLeader),
        Err(ClientError::Problem(problem)) if problem.status == 404 => Ok(Leading::Vacant),
        Ok((status, text)) => Err(unexpected(status, text)),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn election_names_are_one_escaped_segment() {
        assert_eq!(election_path("scheduler"), "/elections/scheduler");
        assert_eq!(election_path("a/b c"), "/elections/a%2Fb%20c");
    }
}
