package server

import (
	"github.com/anylift/anylift/internal/sdkwire"
)

// ComputeCertificate is the compute's TLS certificate, as the compute
// registered it.
type ComputeCertificate struct {
	CertificatePath string
	ComputeName     string
}

// FleetRoleCredentialsRequest names the fleet's IAM role to assume.
type FleetRoleCredentialsRequest struct {
	RoleArn         string
	RoleSessionName string // optional
}

// FleetRoleCredentials are temporary credentials of the fleet's role.
// An empty AccessKeyID means the process is not on a managed fleet
// (always so on Anylift, whose fleets are Anywhere fleets).
type FleetRoleCredentials struct {
	AssumedRoleUserArn string
	AssumedRoleID      string
	AccessKeyID        string
	SecretAccessKey    string
	SessionToken       string
	Expiration         int64 // epoch milliseconds
}

// GetComputeCertificate asks for the path of the compute's TLS
// certificate and the compute's name.
func (p *Process) GetComputeCertificate() (ComputeCertificate, error) {
	f, err := p.call(&sdkwire.GetComputeCertificate{}, p.opts.RequestTimeout)
	if err != nil {
		return ComputeCertificate{}, err
	}
	var res sdkwire.GetComputeCertificateResult
	if err := f.Decode(&res); err != nil {
		return ComputeCertificate{}, errorf(InternalService, "malformed answer: %v", err)
	}
	return ComputeCertificate{CertificatePath: res.CertificatePath, ComputeName: res.ComputeName}, nil
}

// GetFleetRoleCredentials asks for credentials of the fleet's IAM role.
func (p *Process) GetFleetRoleCredentials(req FleetRoleCredentialsRequest) (FleetRoleCredentials, error) {
	if req.RoleArn == "" {
		return FleetRoleCredentials{}, errorf(Validation, "RoleArn is required")
	}
	if len(req.RoleSessionName) > 64 {
		return FleetRoleCredentials{}, errorf(Validation, "RoleSessionName must be at most 64 characters")
	}
	f, err := p.call(&sdkwire.GetFleetRoleCredentials{RoleArn: req.RoleArn, RoleSessionName: req.RoleSessionName}, p.opts.RequestTimeout)
	if err != nil {
		return FleetRoleCredentials{}, err
	}
	var res sdkwire.GetFleetRoleCredentialsResult
	if err := f.Decode(&res); err != nil {
		return FleetRoleCredentials{}, errorf(InternalService, "malformed answer: %v", err)
	}
	return FleetRoleCredentials{AssumedRoleUserArn: res.AssumedRoleUserArn, AssumedRoleID: res.AssumedRoleId,
		AccessKeyID: res.AccessKeyId, SecretAccessKey: res.SecretAccessKey, SessionToken: res.SessionToken,
		Expiration: res.Expiration}, nil
}
