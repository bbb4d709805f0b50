package policy

// IsPublic reports whether a bucket policy grants anything to everyone: an
// Allow statement whose principal is "*" and that no condition narrows (a
// condition on, say, aws:SourceIp or aws:SecureTransport makes the grant
// depend on who asks, which AWS does not count as public). It answers
// GetBucketPolicyStatus.
func (p *Policy) IsPublic() bool {
	for _, st := range p.statements {
		if st.effect == EffectAllow && st.principal != nil && st.principal.any && len(st.conditions) == 0 {
			return true
		}
	}
	return false
}
